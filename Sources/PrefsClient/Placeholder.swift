enum _PlaceholderPrefsClient {}

// The seeded generator the tests replay their schedules with, for every file that imports TestHarness.
@_exported import SeededRandom

/// A key path that can be kept in `Sendable` types and shared between tasks.
///
/// The wrappers keep the key path Observation tracks them by in one: a key path literal in a
/// generic type is built anew each time it is evaluated, which would cost every read an
/// allocation.
// @unchecked: a key path object is immutable once made (it only describes a property), so
// reading it from any thread is safe.
@usableFromInline
struct SendableKeyPath<Path: AnyKeyPath>: Hashable, @unchecked Sendable {
    @usableFromInline let keyPath: Path

    @usableFromInline init(_ keyPath: Path) {
        self.keyPath = keyPath
    }
}

import Foundation

/// What tells the engine the time of day, in seconds since 1970: the time a batch commits at,
/// which its changes record and by which the idempotent requests' retention and the change log's
/// `--retain-for` are measured. The system's clock but in tests, which set it by hand.
package struct WallClock: Sendable {
    /// The time now, in seconds since 1970.
    package var now: @Sendable () -> Double

    /// A clock that reads `now`.
    package init(_ now: @escaping @Sendable () -> Double) {
        self.now = now
    }

    /// The system's clock.
    package static let system = WallClock { Date().timeIntervalSince1970 }
}

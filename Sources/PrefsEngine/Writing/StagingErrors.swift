import Foundation
import PrefsKit

/// Turns a failed write of a staged upload into the ``PrefsError`` callers understand.
package enum StagingErrors {
    /// A failed write of a file beside the database (a staged upload): a full disk is
    /// `storage_full`, any other failure `unavailable`; other errors pass unchanged.
    package static func translate(_ error: any Error) -> any Error {
        guard !(error is PrefsError), !(error is CancellationError) else { return error }
        let bridged = error as NSError
        let underlying = bridged.userInfo[NSUnderlyingErrorKey] as? NSError
        let outOfSpace =
            (bridged.domain == NSCocoaErrorDomain && bridged.code == CocoaError.fileWriteOutOfSpace.rawValue)
            || (bridged.domain == NSPOSIXErrorDomain && bridged.code == Int(ENOSPC))
            || (underlying?.domain == NSPOSIXErrorDomain && underlying?.code == Int(ENOSPC))
        // Any other error passes as it was thrown, not as its NSError bridge.
        guard bridged.domain == NSCocoaErrorDomain || bridged.domain == NSPOSIXErrorDomain else { return error }
        if outOfSpace {
            return PrefsError(.storageFull, "The disk is full; the upload was not kept. Free some space and retry.")
        }
        return PrefsError(.unavailable, "Cannot write the upload beside the database: \(bridged.localizedDescription)")
    }
}

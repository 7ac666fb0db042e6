import CZlib
import PrefsKit

/// Decompresses one zlib stream — HTTP's `deflate` content coding — as its pieces arrive,
/// handing on what each holds, a piece of bounded size at a time (so that a small input that
/// inflates to gigabytes is stopped by its reader's limit, not held).
///
/// Not thread-safe: one owner reads the stream, in order.
package final class Inflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private var ended = false

    /// A decompressor for a stream of any window size.
    package init() {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = inflateInit2_(stream, 15, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        precondition(status == Z_OK, "zlib's inflateInit2 failed: \(status)")
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Decompresses `bytes`, the stream's next piece, handing what they hold to `output` at most
    /// 16 KiB at a time.
    ///
    /// - Throws: ``PrefsError`` `invalid_request` when the bytes are not a zlib stream, or go on
    ///   after its end; whatever `output` throws.
    package func inflate(_ bytes: some Collection<UInt8>, into output: ([UInt8]) throws -> Void) throws {
        guard !bytes.isEmpty else { return }
        guard !ended else { throw PrefsError(.invalidRequest, "The deflated stream goes on after its end.") }
        var input = Array(bytes)
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        try input.withUnsafeMutableBufferPointer { input in
            stream.pointee.next_in = input.baseAddress
            stream.pointee.avail_in = UInt32(input.count)
            defer { stream.pointee.next_in = nil }
            while true {
                let (status, produced) = chunk.withUnsafeMutableBufferPointer { out in
                    stream.pointee.next_out = out.baseAddress
                    stream.pointee.avail_out = UInt32(out.count)
                    let status = CZlib.inflate(stream, Z_SYNC_FLUSH)
                    return (status, out.count - Int(stream.pointee.avail_out))
                }
                switch status {
                case Z_OK, Z_BUF_ERROR, Z_STREAM_END:
                    if produced > 0 { try output(Array(chunk[..<produced])) }
                    if status == Z_STREAM_END {
                        ended = true
                        guard stream.pointee.avail_in == 0 else {
                            throw PrefsError(.invalidRequest, "The deflated stream goes on after its end.")
                        }
                        return
                    }
                    // Done with this piece once zlib has taken all of it and has no more to give.
                    if stream.pointee.avail_in == 0, produced < chunk.count { return }
                    if status == Z_BUF_ERROR, produced == 0 { return }
                default:
                    throw PrefsError(.invalidRequest, "The body is not a deflated (zlib) stream: zlib says \(status).")
                }
            }
        }
    }
}

import CZlib

/// Compresses a stream of frames as one zlib stream — HTTP's `deflate` content coding — each
/// frame flushed whole (`Z_SYNC_FLUSH`), so that the other side can read it as soon as it
/// arrives, while what a frame repeats of those before it (field names, keys, scopes) costs a
/// few bytes.
///
/// The window is 4 KiB and the memory level low: a stream of small frames finds its repeats in
/// the last few frames, and an upstream keeps one of these per connected device (some 20 KiB,
/// not zlib's default 256 KiB).
///
/// Not thread-safe: one owner compresses, in the order the frames are sent.
package final class Deflater {
    private let stream: UnsafeMutablePointer<z_stream>

    /// A compressor at zlib's default level.
    package init() {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = deflateInit2_(
            stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, Self.windowBits, Self.memoryLevel, Z_DEFAULT_STRATEGY, zlibVersion(),
            Int32(MemoryLayout<z_stream>.size))
        // Fails only for bad parameters (fixed here) or no memory at all.
        precondition(status == Z_OK, "zlib's deflateInit2 failed: \(status)")
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// `bytes` compressed and flushed: everything the other side needs to read them.
    package func compress(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count / 2 + 64)
        var chunk = [UInt8](repeating: 0, count: max(64, bytes.count / 2 + 64))
        bytes.withUnsafeBufferPointer { input in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.pointee.avail_in = UInt32(input.count)
            repeat {
                chunk.withUnsafeMutableBufferPointer { out in
                    stream.pointee.next_out = out.baseAddress
                    stream.pointee.avail_out = UInt32(out.count)
                    // With output space, a sync flush cannot fail (Z_BUF_ERROR only means no
                    // progress was possible, which the loop's condition ends on).
                    _ = deflate(stream, Z_SYNC_FLUSH)
                    output.append(contentsOf: out[..<(out.count - Int(stream.pointee.avail_out))])
                }
            } while stream.pointee.avail_out == 0
            stream.pointee.next_in = nil
        }
        return output
    }

    /// 2¹² bytes of window.
    private static let windowBits: Int32 = 12
    /// zlib's memory level 5 of 9: 2¹⁴ bytes of hash state.
    private static let memoryLevel: Int32 = 5
}

/// Writes a stream of frames — JSON texts, one a line (NDJSON) — deflated or not: the bytes to
/// send for each frame, in the order they are sent.
package struct FrameWriter {
    private let deflater: Deflater?

    /// A writer that compresses its frames as one stream if `deflated`.
    package init(deflated: Bool) {
        deflater = deflated ? Deflater() : nil
    }

    /// What to send for `frame` (one JSON text, without a line break).
    package func bytes(for frame: [UInt8]) -> [UInt8] {
        let line = frame + [UInt8(ascii: "\n")]
        return deflater?.compress(line) ?? line
    }
}

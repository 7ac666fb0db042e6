import PrefsKit
import PrefsWire
import TestHarness
import Testing

/// The sync stream's wire: frames written deflated (or not) read back whole, however the bytes
/// between are cut; what is too long, or no zlib stream, is refused.
@Suite struct FrameStreamTests {
    /// Frames of JSON-like text with the repeats a sync stream has.
    static func frames(_ count: Int, random: inout SplitMix64) -> [[UInt8]] {
        (0..<count).map { index in
            let value = random.next() % 10_000
            let padding = String(repeating: "x", count: Int(random.next() % 300))
            return Array(#"{"id":\#(index),"request":{"cursor":\#(value),"mutations":[],"note":"\#(padding)"}}"#.utf8)
        }
    }

    /// `bytes` in pieces of random sizes (1 to 64 bytes).
    static func cut(_ bytes: [UInt8], random: inout SplitMix64) -> [[UInt8]] {
        var pieces: [[UInt8]] = []
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + 1 + Int(random.next() % 64))
            pieces.append(Array(bytes[start..<end]))
            start = end
        }
        return pieces
    }

    @Test(arguments: [false, true])
    func framesComeBackWholeHoweverTheBytesAreCut(deflated: Bool) throws {
        var random = SplitMix64(seed: deflated ? 7 : 11)
        let sent = Self.frames(200, random: &random)
        let writer = FrameWriter(deflated: deflated)
        let wire = sent.flatMap { writer.bytes(for: $0) }
        var reader = FrameReader(deflated: deflated, limit: 1024)
        var read: [[UInt8]] = []
        for piece in Self.cut(wire, random: &random) { read += try reader.frames(in: piece) }
        #expect(read == sent)
        #expect(!reader.hasPartialFrame)
    }

    @Test func eachDeflatedFrameIsReadableAsSoonAsItArrives() throws {
        let writer = FrameWriter(deflated: true)
        var reader = FrameReader(deflated: true, limit: 1024)
        for index in 0..<50 {
            let frame = Array(#"{"id":\#(index),"answer":{"cursor":\#(index),"changes":[]}}"#.utf8)
            #expect(try reader.frames(in: writer.bytes(for: frame)) == [frame])
        }
    }

    @Test func repeatsCostAFewBytes() {
        let writer = FrameWriter(deflated: true)
        let frame = { (seq: Int) in
            Array(#"{"id":\#(seq),"request":{"cursor":4,"mutations":[{"key":"timeline.fontSize","scope":"/accounts/alice","seq":\#(seq),"value":\#(seq)}]}}"#.utf8)
        }
        let first = writer.bytes(for: frame(1)).count
        let later = (2...20).map { writer.bytes(for: frame($0)).count }
        #expect(later.allSatisfy { $0 * 3 < first }, "first \(first), later \(later)")
    }

    @Test(arguments: [false, true])
    func aFrameLongerThanTheLimitIsRefusedBeforeItIsHeld(deflated: Bool) throws {
        let writer = FrameWriter(deflated: deflated)
        var reader = FrameReader(deflated: deflated, limit: 100)
        #expect(try reader.frames(in: writer.bytes(for: Array(repeating: UInt8(ascii: "a"), count: 100))).count == 1)
        // A megabyte of one byte deflates to a kilobyte: refused as it inflates past the limit.
        let long = writer.bytes(for: Array(repeating: UInt8(ascii: "a"), count: 1_000_000))
        #expect {
            _ = try reader.frames(in: long)
        } throws: { ($0 as? PrefsError)?.code == .tooLarge }
    }

    @Test func bytesThatAreNoZlibStreamAreRefused() throws {
        var reader = FrameReader(deflated: true, limit: 1024)
        #expect {
            _ = try reader.frames(in: Array(#"{"id":1,"request":{"cursor":0}}"#.utf8) + [10])
        } throws: { ($0 as? PrefsError)?.code == .invalidRequest }
    }

    @Test func aCutFrameIsPartialAndEmptyLinesAreSkipped() throws {
        var reader = FrameReader(deflated: false, limit: 1024)
        #expect(try reader.frames(in: Array("\n\n{\"a\":1}\n{\"b\"".utf8)) == [Array("{\"a\":1}".utf8)])
        #expect(reader.hasPartialFrame)
    }
}

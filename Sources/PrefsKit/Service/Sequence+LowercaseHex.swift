extension Sequence<UInt8> {
    /// The bytes as lowercase hexadecimal, two digits each (a SHA-256 digest's usual form), written
    /// straight into the string's storage — `String(format:)` costs a microsecond a byte. Bytes
    /// in contiguous storage (a digest's `withUnsafeBytes`) are read where they are, uncopied.
    package var lowercaseHex: String {
        withContiguousStorageIfAvailable(hexadecimal) ?? Array(self).withUnsafeBufferPointer(hexadecimal)
    }
}

/// `bytes` as lowercase hexadecimal.
private func hexadecimal(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
    String(unsafeUninitializedCapacity: bytes.count * 2) { text in
        for (index, byte) in bytes.enumerated() {
            text[2 * index] = hexDigit(byte >> 4)
            text[2 * index + 1] = hexDigit(byte & 0x0F)
        }
        return bytes.count * 2
    }
}

/// The ASCII digit of `value` (0 to 15) in lowercase hexadecimal.
private func hexDigit(_ value: UInt8) -> UInt8 {
    value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
}

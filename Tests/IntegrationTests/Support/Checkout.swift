import Foundation

/// The checkout these tests were built from: the nearest folder above this file that holds
/// `Package.swift`, so a test finds README.md, openapi.yaml, Migrations/ and Scripts/ wherever
/// its own file sits in the tests' folders.
enum Checkout {
    static let root: URL = {
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: folder.appending(path: "Package.swift").path) {
            precondition(folder.path != "/", "no Package.swift above \(#filePath)")
            folder.deleteLastPathComponent()
        }
        return folder
    }()

    /// `path`, relative to the checkout's root.
    static func url(_ path: String) -> URL { root.appending(path: path) }
}

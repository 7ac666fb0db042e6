// swift-tools-version:6.1
import CompilerPluginSupport
import PackageDescription

/// Settings every target of this package shares: Swift 6 mode is the tools-version default;
/// these make dependencies explicit.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// `PREFSCTL_STATIC=1 swift build -c release --static-swift-stdlib` makes a release prefsctl
/// one static executable, the C and C++ libraries linked in too: no dynamic loader, no libraries
/// to map, no symbols to bind, no relocations — half a one-shot `prefsctl get`'s start-up, which
/// then matches `dconf read` (Scripts/bench.sh builds it so). It needs `--static-swift-stdlib`
/// (else ICU's symbols are missing), and the linker warns that glibc's user and group look-ups
/// (getpwuid_r and kin, linked through Foundation) need that same glibc's NSS modules at run
/// time: the machine that built prefsctl has them. A plain `swift build -c release` links
/// prefsctl dynamically.
let staticPrefsctl = Context.environment["PREFSCTL_STATIC"] == "1"

let package = Package(
    name: "prefsd",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "PrefsKit", targets: ["PrefsKit"]),
        .library(name: "PrefsEngine", targets: ["PrefsEngine"]),
        .library(name: "PrefsStore", targets: ["PrefsStore"]),
        .library(name: "PrefsPostgres", targets: ["PrefsPostgres"]),
        .library(name: "PrefsClientCore", targets: ["PrefsClientCore"]),
        .library(name: "PrefsClient", targets: ["PrefsClient"]),
        .library(name: "PrefsConfiguration", targets: ["PrefsConfiguration"]),
        .library(name: "PrefsSync", targets: ["PrefsSync"]),
        .executable(name: "prefsd", targets: ["prefsd"]),
        .executable(name: "prefsctl", targets: ["prefsctl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // Tested with 600.0.1, 602.0.0 and 603.0.1; a range lets apps share it with other macro packages.
        .package(url: "https://github.com/swiftlang/swift-syntax", "600.0.1"..<"604.0.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // `swift package generate-documentation --target PrefsKit`: the DocC catalog in Sources/PrefsKit.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // For PrefsConfiguration; it needs Swift 6.2. No traits: the provider needs none of its
        // file formats, reloading or logging.
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0", traits: []),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        // PrefsSync: a device daemon's exchanges with its upstream over HTTP(S).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        // Domain: keys, values, scopes, resolution, schemas, change events, the service protocol. No I/O.
        .target(name: "PrefsKit", dependencies: ["PrefsKitMacros"], swiftSettings: swiftSettings),

        // The @Preference macro's implementation (a compiler plugin; PrefsKit declares the macro).
        .macro(
            name: "PrefsKitMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftParser", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ],
            swiftSettings: swiftSettings
        ),

        // The engine every backend shares: cache, watch hub, replay, group commit, write rules,
        // over a storage that holds only SQL, transactions and blob I/O.
        .target(
            name: "PrefsEngine",
            dependencies: [
                "PrefsKit",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),

        // The SQLite storage (GRDB) and EmbeddedStore. Its SQL lives in Migrations/sqlite/ and is
        // compiled into the binary.
        .target(
            name: "PrefsStore",
            dependencies: [
                "PrefsKit", "PrefsEngine",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                "SQLiteSettings",
            ],
            swiftSettings: swiftSettings,
            plugins: ["EmbedMigrations"]
        ),
        // SQLite's process-wide settings, which only C can make (sqlite3_config is variadic).
        .systemLibrary(name: "SQLiteSettings", providers: [.apt(["libsqlite3-dev"])]),
        // The PostgreSQL storage (postgres-nio) and PostgresStore: several hosts, one database.
        // Its SQL lives in Migrations/postgres/ and is compiled into the binary.
        .target(
            name: "PrefsPostgres",
            dependencies: [
                "PrefsKit", "PrefsEngine",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings,
            plugins: ["EmbedMigrations"]
        ),
        // What the build plugins run: it writes text files into Swift source.
        .executableTarget(name: "TextEmbedder", swiftSettings: swiftSettings),
        .plugin(name: "EmbedMigrations", capability: .buildTool(), dependencies: ["TextEmbedder"]),
        // The console's files (Console/), compiled into PrefsServer.
        .plugin(name: "EmbedConsole", capability: .buildTool(), dependencies: ["TextEmbedder"]),

        // The daemon client: the same protocol as the store, over the Unix socket, with keep-alive
        // connections on plain POSIX calls and no networking library (what prefsctl links)…
        .target(name: "PrefsClientCore", dependencies: ["PrefsKit", "PrefsSocket"], swiftSettings: swiftSettings),
        // …and the module applications import, with `PrefsClient(socketPath:)`.
        .target(name: "PrefsClient", dependencies: ["PrefsKit", "PrefsClientCore"], swiftSettings: swiftSettings),

        // Connecting to a Unix socket by its path: for the client, the daemon's check for a live
        // daemon on its socket, the benchmark and the tests.
        .target(name: "PrefsSocket", swiftSettings: swiftSettings),

        // zlib, for the sync stream's `deflate` (Debian's zlib1g-dev)…
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        // …and the sync stream's wire: frames of JSON, one a line, deflated as one stream.
        .target(name: "PrefsWire", dependencies: ["PrefsKit", "CZlib"], swiftSettings: swiftSettings),

        // The HTTP API of an engine: each endpoint defined once; the listeners (Unix socket, TCP),
        // the raw-bytes fast path and the general HTTP/1 path (NIOHTTP1) are adapters over those
        // definitions. It also serves the console's files, from Console/, compiled in.
        .target(
            name: "PrefsServer",
            dependencies: [
                "PrefsKit", "PrefsEngine", "PrefsSocket", "PrefsWire",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: swiftSettings,
            plugins: ["EmbedConsole"]
        ),

        // How a replica reaches its upstream prefsd: `POST /v1/sync` over HTTP or HTTPS
        // (AsyncHTTPClient), for `prefsd --upstream` and an `EmbeddedStore` given an upstream.
        .target(
            name: "PrefsSync",
            dependencies: [
                "PrefsKit", "PrefsEngine", "PrefsStore", "PrefsWire",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),

        // A swift-configuration provider over any PrefsService: a ConfigReader reads prefsd at a scope.
        .target(
            name: "PrefsConfiguration",
            dependencies: ["PrefsKit", .product(name: "Configuration", package: "swift-configuration")],
            swiftSettings: swiftSettings
        ),

        .executableTarget(
            name: "prefsd",
            dependencies: [
                "PrefsKit", "PrefsStore", "PrefsPostgres", "PrefsServer", "PrefsSync",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "prefsctl",
            dependencies: [
                "PrefsKit", "PrefsClientCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings,
            linkerSettings: staticPrefsctl ? [.unsafeFlags(["-static-executable"], .when(configuration: .release))] : []
        ),

        // A compose-screen model on the Swift API; CI runs it.
        .executableTarget(
            name: "compose-example",
            dependencies: ["PrefsKit", "PrefsStore", "PrefsClient"],
            path: "Examples/ComposeExample",
            swiftSettings: swiftSettings
        ),

        // README's Swift section, exactly (the tests check it is, and that it prints what README
        // shows); CI runs it against an embedded store and a daemon.
        .executableTarget(
            name: "readme-example",
            dependencies: ["PrefsKit", "PrefsStore", "PrefsClient"],
            path: "Examples/ReadmeExample",
            swiftSettings: swiftSettings
        ),

        // README's swift-configuration section, exactly (checked as the Swift section is); CI runs it
        // against an embedded store and a daemon.
        .executableTarget(
            name: "config-example",
            dependencies: [
                "PrefsKit", "PrefsStore", "PrefsClient", "PrefsConfiguration",
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            path: "Examples/ConfigExample",
            swiftSettings: swiftSettings
        ),

        // The benchmark behind Scripts/bench.sh.
        .executableTarget(
            name: "prefs-bench",
            dependencies: [
                "PrefsKit", "PrefsStore", "PrefsClientCore", "PrefsSocket", "SeededRandom", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),

        // A seeded generator (SplitMix64): the tests' random schedules and the benchmark's drafts
        // replay exactly from their seeds.
        .target(name: "SeededRandom", path: "Tests/SeededRandom", swiftSettings: swiftSettings),
        // Hand-made image headers the tests share.
        .target(name: "SampleImages", path: "Tests/SampleImages", swiftSettings: swiftSettings),
        // What the test targets share to wait without blocking a thread of the concurrency pool:
        // child processes, blocking reads, closing stores.
        .target(
            name: "TestHarness",
            dependencies: ["PrefsKit", "PrefsStore", "SeededRandom", .product(name: "PostgresNIO", package: "postgres-nio")],
            path: "Tests/TestHarness", swiftSettings: swiftSettings),

        .testTarget(name: "PrefsKitTests", dependencies: ["PrefsKit", "SampleImages", "TestHarness"], swiftSettings: swiftSettings),
        .testTarget(
            name: "PrefsKitMacrosTests",
            dependencies: [
                "PrefsKitMacros",
                // The key-name rule is held to PrefsKit's.
                "PrefsKit",
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftParser", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
            ],
            swiftSettings: swiftSettings
        ),
        // The engine alone, over an in-memory storage that other writers share and a clock the
        // tests move: the multi-writer logic without PostgreSQL.
        .testTarget(name: "PrefsWireTests", dependencies: ["PrefsKit", "PrefsWire", "TestHarness"], swiftSettings: swiftSettings),
        .testTarget(name: "PrefsEngineTests", dependencies: ["PrefsKit", "PrefsEngine", "TestHarness"], swiftSettings: swiftSettings),
        .testTarget(
            name: "PrefsStoreTests",
            dependencies: [
                "PrefsKit", "PrefsEngine", "PrefsStore", "SampleImages", "TestHarness", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PrefsServerTests",
            dependencies: [
                "PrefsKit", "PrefsEngine", "PrefsStore", "PrefsServer", "PrefsSocket", "PrefsWire", "TestHarness",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // PrefsPostgres in this process, on the database Scripts/postgres-for-tests.sh starts
        // (disabled without one): its writer, its listener, and its state machines.
        .testTarget(
            name: "PrefsPostgresTests",
            dependencies: [
                "PrefsKit", "PrefsEngine", "PrefsPostgres", "TestHarness", .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The DocC articles' code, compiled and run: every ```swift block of
        // Sources/PrefsKit/PrefsKit.docc is in these tests, word for word.
        .testTarget(name: "DocumentationTests", dependencies: ["PrefsKit", "PrefsStore"], swiftSettings: swiftSettings),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "PrefsKit", "PrefsClient", "PrefsStore", "PrefsPostgres", "PrefsSocket", "PrefsSync", "PrefsConfiguration", "SampleImages",
                "TestHarness",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ConfigurationTesting", package: "swift-configuration"),
            ],
            swiftSettings: swiftSettings
        ),

    ]
)

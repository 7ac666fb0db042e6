import PrefsKit
import Testing

@Suite("Default paths")
struct DefaultPathsTests {
    @Test("XDG variables decide the database and the socket")
    func xdg() {
        let paths = DefaultPaths(
            environment: ["HOME": "/home/u", "XDG_STATE_HOME": "/state", "XDG_RUNTIME_DIR": "/run/user/1000"], uid: 1000)
        #expect(paths.database == "/state/prefsd/prefs.sqlite")
        #expect(paths.socket == "/run/user/1000/prefsd/prefsd.sock")
    }

    @Test("Without XDG: ~/.local/state and /tmp/prefsd-UID")
    func fallbacks() {
        let paths = DefaultPaths(environment: ["HOME": "/home/u"], uid: 501)
        #expect(paths.database == "/home/u/.local/state/prefsd/prefs.sqlite")
        #expect(paths.socket == "/tmp/prefsd-501/prefsd.sock")
    }

    @Test("Empty XDG variables count as unset")
    func emptyXDG() {
        let paths = DefaultPaths(environment: ["HOME": "/home/u", "XDG_STATE_HOME": "", "XDG_RUNTIME_DIR": ""], uid: 7)
        #expect(paths.database == "/home/u/.local/state/prefsd/prefs.sqlite")
        #expect(paths.socket == "/tmp/prefsd-7/prefsd.sock")
    }

    @Test("No HOME at all still gives absolute paths")
    func noHome() {
        let paths = DefaultPaths(environment: [:], uid: 0)
        #expect(paths.database == "/tmp/.local/state/prefsd/prefs.sqlite")
        #expect(paths.socket == "/tmp/prefsd-0/prefsd.sock")
    }

    @Test("PREFSD_DB and PREFSD_SOCKET override everything")
    func explicit() {
        let paths = DefaultPaths(
            environment: [
                "HOME": "/home/u", "XDG_STATE_HOME": "/state", "XDG_RUNTIME_DIR": "/run/user/1",
                "PREFSD_DB": "/data/p.sqlite", "PREFSD_SOCKET": "/sock/p.sock",
            ], uid: 1)
        #expect(paths.database == "/data/p.sqlite")
        #expect(paths.socket == "/sock/p.sock")
    }

    @Test("An empty PREFSD_SOCKET counts as unset")
    func emptySocket() {
        let paths = DefaultPaths(environment: ["HOME": "/h", "PREFSD_SOCKET": "", "XDG_RUNTIME_DIR": "/run/u"], uid: 2)
        #expect(paths.socket == "/run/u/prefsd/prefsd.sock")
    }

    @Test("An empty PREFSD_DB counts as unset, like an empty PREFSD_SOCKET")
    func emptyDatabase() {
        let paths = DefaultPaths(environment: ["HOME": "/h", "PREFSD_DB": ""], uid: 2)
        #expect(paths.database == "/h/.local/state/prefsd/prefs.sqlite")
    }
}

import DecantCore
import DecantTestSupport
import Foundation
import Testing

/// `DestinationLease`'s lock: one holder at a time, and no lock file left once it is released.
@Suite("Destination lease lock")
struct DestinationLeaseLockTests {

    @Test func releasingRemovesTheLockFile() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Store.sqlite")
        let url = folder.appendingPathComponent(".Store.sqlite.decant-lock")
        #expect(DestinationLease.lockFile(for: store) == url)
        let lock = try DestinationLease(destination: store, locking: true)
        #expect(FileManager.default.fileExists(atPath: url.path))
        #expect(lock.holdsLock && DestinationLease.isLocked(store))
        lock.release()
        #expect(!FileManager.default.fileExists(atPath: url.path))
        #expect(!lock.holdsLock && !DestinationLease.isLocked(store))
        lock.release()
        // A file a killed run left is taken over, then removed too.
        #expect(FileManager.default.createFile(atPath: url.path, contents: Data()))
        try DestinationLease(destination: store, locking: true).release()
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    /// Threads take and release the lock many times (each lease opens the file on its own, so `flock` keeps
    /// them apart as it does processes): never two holders at once, although each release removes the file that
    /// others may be waiting on.
    @Test func neverTwoHolders() throws {
        let folder = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Store.sqlite")
        let url = DestinationLease.lockFile(for: store)
        let state = HolderCount()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<300 {
                do {
                    let lock = try DestinationLease(destination: store, locking: true)
                    state.enter()
                    usleep(20)
                    state.leave()
                    lock.release()
                } catch {
                    state.fail(error)
                }
            }
        }
        #expect(state.errors.isEmpty, "\(state.errors)")
        #expect(state.maximum == 1)
        #expect(state.entries == 1_200)
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }
}

/// How many threads hold the lock, and the most that ever did at once.
private final class HolderCount: @unchecked Sendable {
    private let guardLock = NSLock()
    private var current = 0
    private(set) var maximum = 0
    private(set) var entries = 0
    private(set) var errors: [String] = []

    func enter() {
        guardLock.withLock {
            current += 1
            entries += 1
            maximum = max(maximum, current)
        }
    }

    func leave() { guardLock.withLock { current -= 1 } }

    func fail(_ error: any Error) { guardLock.withLock { errors.append("\(error)") } }
}

import DecantCore
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file's bytes mapped read-only into memory, for readers that look at a large file object by object.
///
/// The pages the reader touches come from the system's file cache and count towards the process's resident size
/// only while they are mapped in; ``releaseResidentPages(of:)`` hands them back after a pass over part of the file,
/// so a long walk over a large archive holds the part it is working on, not the whole file. The data unmaps the file
/// when it goes away. The file must not be truncated while it is mapped (reading a truncated page stops the
/// process), the usual condition for mapped input.
enum MappedFile {
    /// The file's bytes, mapped when it is a non-empty regular file the system lets us map, else read (then
    /// `isMapped` is false).
    /// - Throws: what `Data(contentsOf:)` throws when the file cannot be read.
    static func data(contentsOf url: URL) throws -> (data: Data, isMapped: Bool) {
        #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        let descriptor = open(url.path, O_RDONLY)
        if descriptor >= 0 {
            defer { close(descriptor) }
            var status = stat()
            if fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, status.st_size > 0,
                let count = Int(exactly: status.st_size),
                let base = mmap(nil, count, PROT_READ, MAP_PRIVATE, descriptor, 0),
                Int(bitPattern: base) != -1
            {
                let data = Data(bytesNoCopy: base, count: count, deallocator: .custom { pointer, count in
                    munmap(pointer, count)
                })
                return (data, true)
            }
        }
        #endif
        return (try Data(contentsOf: url), false)
    }

    /// Drops the resident pages of mapped `data` (from ``data(contentsOf:)`` with `isMapped` true); later reads
    /// fault them back in from the file cache. Harmless to the contents: the mapping is private and read-only.
    static func releaseResidentPages(of data: Data) {
        #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        data.withUnsafeBytes { raw in
            guard let base = raw.baseAddress, raw.count > 0 else { return }
            // The mapping starts on a page boundary; madvise wants one.
            _ = madvise(UnsafeMutableRawPointer(mutating: base), raw.count, MADV_DONTNEED)
        }
        #endif
    }
}

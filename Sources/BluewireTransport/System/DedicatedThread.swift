import Glibc

/// A detached POSIX thread for work that blocks (poll, read, connect): such work must never run on
/// the cooperative pool, whose few threads all tasks share.
package enum DedicatedThread {
    private final class Box: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// Starts `body` on a new detached thread.
    package static func start(_ body: @escaping @Sendable () -> Void) throws(SystemCallError) {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, &attributes, { raw in
            guard let raw else { return nil }
            let box = Unmanaged<Box>.fromOpaque(raw).takeRetainedValue()
            box.body()
            return nil
        }, box)
        if status != 0 {
            Unmanaged<Box>.fromOpaque(box).release()
            throw SystemCallError("pthread_create", Errno(rawValue: status))
        }
    }

    /// Runs blocking `body` on a new thread and waits for it without holding a pool thread.
    package static func run<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(TransportError) -> Result<T, E> {
        let outcome: Result<Result<T, E>, SystemCallError> = await withCheckedContinuation { continuation in
            do throws(SystemCallError) {
                try start {
                    do throws(E) {
                        continuation.resume(returning: .success(.success(try body())))
                    } catch {
                        continuation.resume(returning: .success(.failure(error)))
                    }
                }
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        switch outcome {
        case .success(let result): return result
        case .failure(let error): throw .system(error)
        }
    }
}

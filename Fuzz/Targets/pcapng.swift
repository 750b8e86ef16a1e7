// The capture reader on pcapng files (section headers in both byte orders, interface descriptions,
// enhanced/simple/obsolete packet blocks, link types 187, 201 and 254); the seeds are slices of the
// real capture and small synthetic files. Invariants: see Capture/CaptureChecks.swift.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    checkCapture(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

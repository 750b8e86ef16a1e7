// The capture reader on btsnoop files (datalinks 1001, 1002, 2001 and unknown ones); the seeds are
// slices of the real captures. Invariants: see Capture/CaptureChecks.swift.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    checkCapture(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

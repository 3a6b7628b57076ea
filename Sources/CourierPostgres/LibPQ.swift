import Courier
import CourierSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The few libpq functions the PostgreSQL store calls, bound at run time with `dlopen` and
/// `dlsym` (as the platform kit binds libcurl), so that the package builds without libpq's
/// headers and runs without libpq until a store is opened.
///
/// The types are the C prototypes of libpq-fe.h written as `@convention(c)` functions: a
/// `PGconn *` and a `PGresult *` are opaque pointers, C `int` and libpq's enums are `Int32`.
struct LibPQ: Sendable {
    typealias ConnectDB = @convention(c) (UnsafePointer<CChar>?) -> OpaquePointer?
    typealias ConnectionFunction = @convention(c) (OpaquePointer?) -> Int32
    typealias ConnectionText = @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    typealias ConnectionAction = @convention(c) (OpaquePointer?) -> Void
    typealias ExecParams =
        @convention(c) (
            OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafePointer<UInt32>?, UnsafePointer<UnsafePointer<CChar>?>?,
            UnsafePointer<Int32>?, UnsafePointer<Int32>?, Int32
        ) -> OpaquePointer?
    typealias ResultFunction = @convention(c) (OpaquePointer?) -> Int32
    typealias ResultText = @convention(c) (OpaquePointer?) -> UnsafeMutablePointer<CChar>?
    typealias ResultField = @convention(c) (OpaquePointer?, Int32) -> UnsafeMutablePointer<CChar>?
    typealias GetValue = @convention(c) (OpaquePointer?, Int32, Int32) -> UnsafeMutablePointer<CChar>?
    typealias GetIsNull = @convention(c) (OpaquePointer?, Int32, Int32) -> Int32
    typealias Notifies = @convention(c) (OpaquePointer?) -> UnsafeMutableRawPointer?
    typealias FreeMemory = @convention(c) (UnsafeMutableRawPointer?) -> Void

    /// `CONNECTION_OK` of `ConnStatusType`.
    static let connectionOK: Int32 = 0
    /// `PGRES_COMMAND_OK` and `PGRES_TUPLES_OK` of `ExecStatusType`.
    static let commandOK: Int32 = 1
    static let tuplesOK: Int32 = 2
    /// `PG_DIAG_SQLSTATE`: the field code of an error's five-character SQLSTATE.
    static let sqlStateField = Int32(UInt8(ascii: "C"))

    let connectdb: ConnectDB
    let status: ConnectionFunction
    let errorMessage: ConnectionText
    let finish: ConnectionAction
    let reset: ConnectionAction
    let socket: ConnectionFunction
    let consumeInput: ConnectionFunction
    let notifies: Notifies
    let freemem: FreeMemory
    let execParams: ExecParams
    let resultStatus: ResultFunction
    let resultErrorMessage: ResultText
    let resultErrorField: ResultField
    let ntuples: ResultFunction
    let nfields: ResultFunction
    let getvalue: GetValue
    let getisnull: GetIsNull
    let clear: ConnectionAction

    /// The Debian package that ships `libpq.so.5`.
    static let debianPackage = "libpq5"

    /// Each library name loaded once per process (`dlopen` is reference-counted; the handle is kept).
    private static let loaded = Locked<[String: LibPQ]>([:])

    /// Binds libpq from `library` (default `libpq.so.5`, the soname of every libpq since 8.x).
    ///
    /// - Throws: ``CourierError/Code-swift.struct/storeUnavailable`` naming the Debian package to
    ///   install when the library cannot be loaded, or the symbol missing when it is not libpq.
    static func load(_ library: String = "libpq.so.5") throws(CourierError) -> LibPQ {
        if let bound = loaded.withLock({ $0[library] }) { return bound }
        guard let handle = dlopen(library, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "not found"
            throw CourierError(
                code: .storeUnavailable,
                message:
                    "the PostgreSQL client library \(library) cannot be loaded (\(reason)); install Debian's \(debianPackage) package (apt-get install \(debianPackage))"
            )
        }
        func bind<Function>(_ name: String, as type: Function.Type) throws(CourierError) -> Function {
            guard let symbol = dlsym(handle, name) else {
                throw CourierError(
                    code: .storeUnavailable,
                    message: "\(library) has no \(name): it is not a libpq this store can use (Debian's \(debianPackage) provides one)")
            }
            return unsafeBitCast(symbol, to: type)
        }
        let bound = LibPQ(
            connectdb: try bind("PQconnectdb", as: ConnectDB.self),
            status: try bind("PQstatus", as: ConnectionFunction.self),
            errorMessage: try bind("PQerrorMessage", as: ConnectionText.self),
            finish: try bind("PQfinish", as: ConnectionAction.self),
            reset: try bind("PQreset", as: ConnectionAction.self),
            socket: try bind("PQsocket", as: ConnectionFunction.self),
            consumeInput: try bind("PQconsumeInput", as: ConnectionFunction.self),
            notifies: try bind("PQnotifies", as: Notifies.self),
            freemem: try bind("PQfreemem", as: FreeMemory.self),
            execParams: try bind("PQexecParams", as: ExecParams.self),
            resultStatus: try bind("PQresultStatus", as: ResultFunction.self),
            resultErrorMessage: try bind("PQresultErrorMessage", as: ResultText.self),
            resultErrorField: try bind("PQresultErrorField", as: ResultField.self),
            ntuples: try bind("PQntuples", as: ResultFunction.self),
            nfields: try bind("PQnfields", as: ResultFunction.self),
            getvalue: try bind("PQgetvalue", as: GetValue.self),
            getisnull: try bind("PQgetisnull", as: GetIsNull.self),
            clear: try bind("PQclear", as: ConnectionAction.self))
        loaded.withLock { $0[library] = bound }
        return bound
    }
}

import XCTest
@testable import courier_bench

/// The nginx the `segmented` bench starts: its configuration and its access log, as text (the
/// bench's `nginx` case runs it for real when nginx is installed).
final class NginxServerTests: XCTestCase {
    func testTheConfigurationServesTheFileAtEachRateAndUnderTheLimitFromItsOwnDirectory() {
        // Given two rates and a connection limit
        let text = NginxServer.configuration(
            port: 40123, directory: "/tmp/bench", rates: [1 << 20, 4 << 20], connectionLimit: (limit: 4, rate: 4 << 20))
        let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        // Then it listens on loopback only, in the foreground, everything it writes in the directory
        XCTAssertTrue(lines.contains("listen 127.0.0.1:40123;"))
        XCTAssertTrue(lines.contains("daemon off;"))
        XCTAssertTrue(lines.contains("master_process off;"))
        XCTAssertTrue(lines.contains("pid \"/tmp/bench/nginx.pid\";"))
        XCTAssertTrue(lines.contains("access_log \"/tmp/bench/access.log\" courier_bench;"))
        // And one location per rate, and one with the limit (the paths the bench asks for)
        XCTAssertTrue(lines.contains("location /rate-1048576 { alias \"/tmp/bench/www/\"; limit_rate 1048576; }"))
        XCTAssertTrue(lines.contains("location /rate-4194304 { alias \"/tmp/bench/www/\"; limit_rate 4194304; }"))
        XCTAssertTrue(
            lines.contains("location /conns-4-rate-4194304 { alias \"/tmp/bench/www/\"; limit_rate 4194304; limit_conn bench_conns 4; }"))
        XCTAssertEqual(NginxServer.ratePath(1 << 20, file: "f.bin"), "/rate-1048576/f.bin")
        XCTAssertEqual(NginxServer.connectionLimitPath(4, rate: 4 << 20, file: "f.bin"), "/conns-4-rate-4194304/f.bin")
    }

    func testTheLogGivesTheRefusalsAndTheBytesServedOfOnePath() {
        let log = """
            206 16777216 /rate-4194304/f.bin
            206 1048576 /rate-4194304/f.bin
            503 197 /rate-4194304/f.bin
            429 0 /rate-4194304/f.bin
            206 999 /rate-1048576/f.bin
            200 5 /other path
            not a line

            """
        let traffic = NginxServer.traffic(ofLog: log, path: "/rate-4194304/f.bin")
        XCTAssertEqual(traffic.refusals, 2, "503 (limit_conn) and 429 are refusals")
        XCTAssertEqual(traffic.servedBytes, 16777216 + 1048576, "only this path's answers' bodies")
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension PlatformReport {
    /// The proxy variables libcurl reads and the proxy it would use for one URL.
    ///
    /// FoundationNetworking never sets a proxy itself (6.3.1 ignores `connectionProxyDictionary`,
    /// Docs/Platform.md §2.11), so libcurl's environment rules decide, read when a transfer starts.
    /// The rules implemented here are libcurl 7.88.1's, checked against the `curl` tool on the same
    /// libcurl (Docs/Observability.md, "Platform report"):
    ///
    /// - **Which variable.** For a URL with scheme `s`: `s_proxy` in lower case; then, except for
    ///   `http`, `S_PROXY` in upper case (libcurl never reads `HTTP_PROXY`: a CGI program gets
    ///   the request's `Proxy:` header in that name); then `all_proxy`, then `ALL_PROXY`. A
    ///   variable set to the empty string counts as unset.
    /// - **`no_proxy`** (else `NO_PROXY`) is checked first; when the host matches, no proxy is
    ///   used. Exactly `*` (nothing else in the value) matches every host. Otherwise the value is
    ///   a list separated by commas, spaces or tabs, and an entry matches:
    ///   - a host name when it equals the host or is a suffix of it at a dot (`example.com` and
    ///     `.example.com` both match `example.com` and `www.example.com`, never
    ///     `notexample.com`), ignoring case and one leading and one trailing dot on either side;
    ///   - an IPv4 address when it is the same address, or a network `a.b.c.d/bits` containing it
    ///     (a `/0` or unreadable length means all 32 bits; more than 32 never matches);
    ///   - an IPv6 address only by the same text as the URL's, without brackets (7.88.1 compares
    ///     it as a name: `::1` matches `http://[::1]/`, `[::1]`, `::0:1` and `::1/128` do not).
    ///   Entries never carry a port: `example.com:8080` matches nothing, and the URL's port plays
    ///   no part. A host name never matches an address entry or the other way round
    ///   (`localhost` does not cover `127.0.0.1`).
    public struct ProxyEnvironment: Sendable, Codable, Equatable {
        /// One proxy-related environment variable that is set.
        public struct Variable: Sendable, Codable, Equatable {
            /// Its name, e.g. `https_proxy`.
            public var name: String
            /// Its value through the report's ``Redaction``: a proxy URL's user info and secret
            /// query parameters masked (`http://***@proxy:3128`).
            public var value: String
            /// What libcurl does with it, e.g. "used for https URLs" or "ignored: …".
            public var note: String
        }

        /// The proxy libcurl would use for one URL, and why.
        public struct Decision: Sendable, Codable, Equatable {
            /// The URL decided for, through the report's ``Redaction`` (user info and secret
            /// query parameters masked).
            public var url: String
            /// The proxy (user info and secret query parameters masked), or `nil` for a direct
            /// connection.
            public var proxy: String?
            /// The variable the proxy came from.
            public var proxyVariable: String?
            /// The `no_proxy` entry that matched the host (`*` for the whole-value wildcard), when
            /// that is why there is no proxy.
            public var bypassedBy: String?
            /// The variable that entry came from: `no_proxy` or `NO_PROXY`.
            public var noProxyVariable: String?
        }

        /// The proxy variables that are set, in the order libcurl looks at them.
        public var variables: [Variable]
        /// The decision for the URL the report was made for; `nil` without one.
        public var effective: Decision?

        /// Every variable name libcurl may read for http and https URLs, plus `HTTP_PROXY`, which
        /// it never reads but people set.
        static let names = ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"]

        /// The set variables and, for `url`, the decision; every URL in them (the proxies', and
        /// `url`) through `redaction`.
        init(environment: [String: String], url: URL?, redaction: Redaction = .default) {
            variables = Self.names.compactMap { name in
                guard let value = Self.value(name, in: environment) else { return nil }
                return Variable(name: name, value: Self.masked(value, redaction), note: Self.note(for: name, in: environment))
            }
            effective = url.map { Self.decision(for: $0, environment: environment, redaction: redaction) }
        }

        /// The proxy libcurl would use for `url` under `environment` (the rules above); the URL
        /// and the proxy through `redaction`.
        static func decision(for url: URL, environment: [String: String], redaction: Redaction = .default) -> Decision {
            var decision = Decision(url: redaction.url(url), proxy: nil, proxyVariable: nil, bypassedBy: nil, noProxyVariable: nil)
            let host = url.host ?? ""
            for name in ["no_proxy", "NO_PROXY"] {
                guard let list = value(name, in: environment) else { continue }
                // Only the first set one counts: libcurl reads NO_PROXY only when no_proxy is unset.
                if let entry = noProxyEntry(matching: host, in: list) {
                    decision.bypassedBy = entry
                    decision.noProxyVariable = name
                    return decision
                }
                break
            }
            for name in proxyVariableNames(forScheme: url.scheme ?? "") {
                guard let proxy = value(name, in: environment) else { continue }
                decision.proxy = masked(proxy, redaction)
                decision.proxyVariable = name
                break
            }
            return decision
        }

        /// The variables libcurl tries for `scheme`, in order.
        static func proxyVariableNames(forScheme scheme: String) -> [String] {
            let lower = scheme.lowercased() + "_proxy"
            // HTTP_PROXY is never read: in CGI, a request header `Proxy:` arrives as HTTP_PROXY.
            let upper = lower == "http_proxy" ? [] : [lower.uppercased()]
            return [lower] + upper + ["all_proxy", "ALL_PROXY"]
        }

        /// The `no_proxy` entry that matches `host`, or `nil` (the rules above). `host` may be a
        /// name, an IPv4 address, or an IPv6 address with or without brackets.
        static func noProxyEntry(matching host: String, in list: String) -> String? {
            guard !host.isEmpty, !list.isEmpty else { return nil }
            if list == "*" { return "*" }
            var name = host
            if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
            let address = IPv4Address(name)
            if address == nil, name.hasSuffix(".") { name.removeLast() }
            let entries = list.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" })
            for entry in entries {
                if let address {
                    if matches(address: address, network: entry) { return String(entry) }
                } else if matches(name: name, pattern: entry) {
                    return String(entry)
                }
            }
            return nil
        }

        static func matches(name: String, pattern entry: Substring) -> Bool {
            var pattern = entry
            if pattern.hasSuffix(".") { pattern.removeLast() }
            if pattern.hasPrefix(".") { pattern.removeFirst() }
            let host = Array(name.lowercased().utf8)
            let token = Array(pattern.lowercased().utf8)
            if token.count == host.count { return token == host }
            guard token.count < host.count else { return false }
            // A suffix at a label boundary: the byte before it must be a dot.
            return host[host.count - token.count - 1] == UInt8(ascii: ".") && host.suffix(token.count).elementsEqual(token)
        }

        static func matches(address: UInt32, network entry: Substring) -> Bool {
            let parts = entry.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let network = IPv4Address(String(parts[0])) else { return false }
            // Like atoi: digits at the start, anything else is 0, and 0 means the whole address.
            var bits = parts.count == 2 ? Int(parts[1].prefix(while: { $0.isASCII && $0.isNumber })) ?? 0 : 0
            if bits == 0 { bits = 32 }
            guard bits <= 32 else { return false }
            let mask: UInt32 = bits == 32 ? .max : ~(UInt32.max >> UInt32(bits))
            return address & mask == network & mask
        }

        /// A dotted-quad IPv4 address as a number, by `inet_pton`'s rules (four decimal parts, no
        /// shorthand), or `nil`.
        static func IPv4Address(_ text: String) -> UInt32? {
            var address = in_addr()
            guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
            return UInt32(bigEndian: address.s_addr)
        }

        /// The value of `name`; empty counts as unset, as in libcurl's `curl_getenv`.
        static func value(_ name: String, in environment: [String: String]) -> String? {
            guard let value = environment[name], !value.isEmpty else { return nil }
            return value
        }

        static func note(for name: String, in environment: [String: String]) -> String {
            switch name {
            case "HTTP_PROXY":
                return "ignored: libcurl reads only lower-case http_proxy"
            case "http_proxy":
                return "used for http URLs"
            case "https_proxy":
                return "used for https URLs"
            case "HTTPS_PROXY":
                return value("https_proxy", in: environment) == nil ? "used for https URLs" : "ignored: https_proxy is set"
            case "all_proxy", "ALL_PROXY":
                let shadowed = name == "ALL_PROXY" && value("all_proxy", in: environment) != nil
                return shadowed ? "ignored: all_proxy is set" : "used when no variable for the URL's scheme is set"
            case "no_proxy":
                return "hosts that bypass the proxy"
            default:  // NO_PROXY
                return value("no_proxy", in: environment) == nil ? "hosts that bypass the proxy" : "ignored: no_proxy is set"
            }
        }

        /// A proxy variable's value through `redaction`, so the report can be logged: its user
        /// info (up to the authority's last `@`, where libcurl ends it) and secret query
        /// parameters masked. libcurl reads a value without `scheme://` as an `http://` URL
        /// (`user:password@proxy:3128`), so such a value is masked as one.
        static func masked(_ value: String, _ redaction: Redaction) -> String {
            let schemeCharacters = { (c: Character) in c.isASCII && (c.isLetter || c.isNumber || "+-.".contains(c)) }
            if let separator = value.range(of: "://"), !value[..<separator.lowerBound].isEmpty,
                value[..<separator.lowerBound].allSatisfy(schemeCharacters)
            {
                return redaction.urlText(value)
            }
            let assumed = "http://"
            return String(redaction.urlText(assumed + value).dropFirst(assumed.count))
        }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What to mask before a request or response is written where people read it: header values,
/// a URL's user info, and the values of query parameters that carry secrets.
///
/// It is the one rule for everything Courier writes for people: ``LoggingMonitor`` passes every
/// URL and header of its records through one, and so do ``TaskMetrics/timeline(redaction:)``,
/// `URLRequest.cURLDescription(redaction:)` and ``PlatformReport``; ``CourierError``'s
/// ``CourierError/message`` and ``CourierError/description`` go through ``default``; `courier`
/// passes every line it prints through one. The default masks:
///
/// - the values of the headers in ``defaultHeaders`` (`Authorization`, `Cookie`, `X-Api-Key`,
///   `X-Amz-Security-Token`…);
/// - a URL's whole user info (`https://user:password@host/` becomes `https://***@host/`); the
///   user info ends at the authority's **last** `@`, as libcurl and Foundation read it, so a
///   password holding an unencoded `@` is masked whole;
/// - the values of the query parameters named in ``defaultQueryParameters`` (`access_token`,
///   `api_key`, `X-Amz-Signature`, `sig`, `code`…).
///
/// Names compare case-insensitively (they are stored lower-cased), and a query parameter's name
/// is percent-decoded before it is compared, so `Access%5FToken=…` is masked too. Everything
/// else is kept byte for byte: parameter order, repeated names, parameters without `=`.
///
///     let redaction = Redaction.default.adding(headers: ["X-Session"]).adding(queryParameters: ["session"])
///     redaction.url(URL(string: "https://u:p@example.com/a?session=42&page=2")!)
///     // "https://***@example.com/a?session=***&page=2"
///
/// What it cannot know is not masked: a secret in a URL's path, in a request or response body,
/// or under a header or parameter name it was not told about.
public struct Redaction: Sendable, Equatable {
    /// The header names whose values are replaced by ``mask``; stored lower-cased, compared
    /// case-insensitively.
    public var headers: Set<String> {
        get { lowercasedHeaders }
        set { lowercasedHeaders = Self.lowercased(newValue) }
    }
    /// The query parameter names whose values are replaced by ``mask``; stored lower-cased,
    /// compared case-insensitively with each parameter's percent-decoded name. The same masking
    /// applies to `name=value` pairs in a URL's fragment (where OAuth's implicit flow puts
    /// `access_token`).
    public var queryParameters: Set<String> {
        get { lowercasedQueryParameters }
        set { lowercasedQueryParameters = Self.lowercased(newValue) }
    }
    /// What a masked value is replaced by.
    public var mask: String

    // Stored lower-cased so that comparing two redactions, and every lookup, ignores case.
    private var lowercasedHeaders: Set<String>
    private var lowercasedQueryParameters: Set<String>

    /// The header names masked by default: HTTP's own credentials and cookies, and the
    /// common headers that carry an API key or a token by themselves.
    ///
    /// - `authorization`, `proxy-authorization`, `cookie`, `set-cookie`: HTTP's;
    /// - `x-api-key` (AWS API Gateway and many APIs), `api-key` (Azure OpenAI and Cognitive
    ///   Search), `x-goog-api-key` (Google APIs), `ocp-apim-subscription-key` (Azure API
    ///   Management), `x-functions-key` (Azure Functions);
    /// - `x-amz-security-token` (an AWS session token), `x-auth-token` and `x-subject-token`
    ///   (OpenStack), `x-vault-token` (HashiCorp Vault), `private-token` (GitLab),
    ///   `x-access-token`.
    ///
    /// A name not here is shown: add your own with ``adding(headers:)`` (`courier` has
    /// `--redact-header`).
    public static let defaultHeaders: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie",
        "x-api-key", "api-key", "x-goog-api-key", "ocp-apim-subscription-key", "x-functions-key",
        "x-amz-security-token", "x-auth-token", "x-subject-token", "x-vault-token", "private-token", "x-access-token",
    ]

    /// The query parameter names masked by default: OAuth's tokens and authorization `code`,
    /// the usual API-key spellings, the signatures and credentials of presigned URLs, and
    /// passwords and secrets.
    ///
    /// - OAuth: `access_token`, `refresh_token`, `id_token`, `token`, `auth`, `code`,
    ///   `client_secret`;
    /// - API keys: `api_key`, `apikey`, `api-key`, `key` (Google APIs), `private_token` (GitLab);
    /// - presigned URLs: `x-amz-signature`, `x-amz-credential`, `x-amz-security-token` (AWS
    ///   SigV4), `signature` and `awsaccesskeyid` (AWS SigV2), `x-goog-signature`,
    ///   `x-goog-credential` (Google Cloud Storage V4), `googleaccessid` (its V2), `sig` (an
    ///   Azure shared access signature);
    /// - `password`, `passwd`, `secret`.
    ///
    /// A presigned URL's signature is a working credential until it expires, so it is masked;
    /// the credential and access key ids name the key that signed it, and are masked with it.
    /// `code` and `key` also mask harmless parameters of those names: a log that shows too little
    /// is the cheaper mistake.
    public static let defaultQueryParameters: Set<String> = [
        "access_token", "refresh_token", "id_token", "token", "auth", "code", "client_secret",
        "api_key", "apikey", "api-key", "key", "private_token",
        "signature", "sig", "x-amz-signature", "x-amz-credential", "x-amz-security-token", "awsaccesskeyid",
        "x-goog-signature", "x-goog-credential", "googleaccessid",
        "password", "passwd", "secret",
    ]

    /// Masks ``defaultHeaders``, URL user info and ``defaultQueryParameters`` with `***`.
    public static let `default` = Redaction()

    /// Masks nothing: for a test, or a log that never leaves the developer's machine.
    public static let none = Redaction(headers: [], queryParameters: [], masksUserInfo: false)

    /// Whether a URL's user info (user name and password) is masked.
    public var masksUserInfo: Bool

    /// Creates a redaction; the defaults are those of ``default``.
    public init(
        headers: Set<String> = Redaction.defaultHeaders,
        queryParameters: Set<String> = Redaction.defaultQueryParameters,
        masksUserInfo: Bool = true,
        mask: String = "***"
    ) {
        self.lowercasedHeaders = Self.lowercased(headers)
        self.lowercasedQueryParameters = Self.lowercased(queryParameters)
        self.masksUserInfo = masksUserInfo
        self.mask = mask
    }

    /// The same redaction, also masking the values of these headers.
    public func adding(headers names: Set<String>) -> Redaction {
        var copy = self
        copy.lowercasedHeaders.formUnion(Self.lowercased(names))
        return copy
    }

    /// The same redaction, also masking the values of these query parameters.
    public func adding(queryParameters names: Set<String>) -> Redaction {
        var copy = self
        copy.lowercasedQueryParameters.formUnion(Self.lowercased(names))
        return copy
    }

    // MARK: Headers

    /// `value`, or ``mask`` when `name` is one of ``headers``. The values of `Location`,
    /// `Content-Location` and `Referer`, which are URLs, go through ``url(_:)``'s masking.
    public func headerValue(name: String, value: String) -> String {
        let lowercasedName = name.lowercased()
        if lowercasedHeaders.contains(lowercasedName) { return mask }
        if Self.urlValuedHeaders.contains(lowercasedName) { return urlText(value) }
        return value
    }

    /// Every header with its value through ``headerValue(name:value:)``, sorted by lower-cased
    /// name (then by name, so the order never depends on the dictionary's).
    public func headers(_ fields: [String: String]) -> [(name: String, value: String)] {
        fields.sorted { ($0.key.lowercased(), $0.key) < ($1.key.lowercased(), $1.key) }
            .map { (name: $0.key, value: headerValue(name: $0.key, value: $0.value)) }
    }

    /// Headers whose values are URLs, and so may carry user info or a signed query.
    private static let urlValuedHeaders: Set<String> = ["location", "content-location", "referer"]

    // MARK: URLs

    /// The absolute URL's text with its user info (user name and password) and the values of
    /// matching query parameters replaced by ``mask``; every other character is kept as it was.
    ///
    ///     Redaction.default.url(URL(string: "https://me:pw@h/p?a=1&token=x&b#top")!)
    ///     // "https://***@h/p?a=1&token=***&b#top"
    public func url(_ url: URL) -> String {
        urlText(url.absoluteString)
    }

    /// The masking of ``url(_:)`` on URL text that need not parse as a `URL`. Works on the
    /// characters as written, never through `URLComponents`, which would re-encode them.
    func urlText(_ text: String) -> String {
        var rest = Substring(text)
        var output = ""
        // An authority only follows `scheme://`: anything else has no user info to mask.
        if let authorityStart = Self.authorityStart(in: rest) {
            output += rest[..<authorityStart]
            rest = rest[authorityStart...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            // The last `@` ends the user info: a password may hold an unencoded `@` in odd URLs.
            if masksUserInfo, let at = authority.lastIndex(of: "@") {
                output += mask
                output += authority[at...]
            } else {
                output += authority
            }
            rest = rest[authorityEnd...]
        }
        let fragmentStart = rest.firstIndex(of: "#") ?? rest.endIndex
        var beforeFragment = rest[..<fragmentStart]
        if let question = beforeFragment.firstIndex(of: "?") {
            output += beforeFragment[...question]
            beforeFragment = beforeFragment[beforeFragment.index(after: question)...]
            output += maskingParameters(beforeFragment)
        } else {
            output += beforeFragment
        }
        if fragmentStart < rest.endIndex {
            output += "#"
            var fragment = rest[rest.index(after: fragmentStart)...]
            // A client-side route's own query: `#/callback?access_token=…`.
            if let question = fragment.firstIndex(of: "?") {
                output += fragment[...question]
                fragment = fragment[fragment.index(after: question)...]
            }
            output += maskingParameters(fragment)
        }
        return output
    }

    /// Where the authority begins, after `scheme://` (RFC 3986 scheme characters), if there is one.
    private static func authorityStart(in text: Substring) -> Substring.Index? {
        guard let colon = text.firstIndex(of: ":"), colon > text.startIndex else { return nil }
        let scheme = text[..<colon]
        guard scheme.first!.isASCII, scheme.first!.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") })
        else { return nil }
        let afterColon = text[text.index(after: colon)...]
        guard afterColon.hasPrefix("//") else { return nil }
        return afterColon.index(afterColon.startIndex, offsetBy: 2)
    }

    /// `a=1&token=x&b` with the values of matching names masked; pieces split on `&` and put
    /// back with it, so nothing else changes.
    private func maskingParameters(_ query: Substring) -> String {
        guard !lowercasedQueryParameters.isEmpty, query.contains("=") else { return String(query) }
        let pieces = query.split(separator: "&", omittingEmptySubsequences: false).map { piece -> Substring in
            guard let equals = piece.firstIndex(of: "="), piece.index(after: equals) < piece.endIndex else { return piece }
            let name = piece[..<equals]
            // A malformed escape (`%zz`) is compared as written rather than dropped.
            let decoded = name.removingPercentEncoding ?? String(name)
            guard lowercasedQueryParameters.contains(decoded.lowercased()) else { return piece }
            return piece[...equals] + mask
        }
        return pieces.joined(separator: "&")
    }

    /// Finds the `scheme://…` URLs in free text (an error message, a refusal, a line for a
    /// terminal) and masks each like ``url(_:)``; the rest of the text is kept as it was.
    ///
    /// A URL ends at white space, a quote or an angle bracket; punctuation that ends a sentence
    /// (`.,;:!?)]}`) right before that is read as the sentence's, not the URL's. A URL without
    /// `scheme://` is not recognised: where the code has the `URL`, ``url(_:)`` is the surer way.
    ///
    ///     Redaction.default.redactingURLs(in: "HTTP 404 from https://h/f?token=t.")
    ///     // "HTTP 404 from https://h/f?token=***."
    public func redactingURLs(in text: String) -> String {
        guard text.contains("://") else { return text }
        var output = ""
        var rest = Substring(text)
        while let separator = rest.range(of: "://") {
            // Walk back over the scheme's characters to where the URL starts.
            var start = separator.lowerBound
            while start > rest.startIndex {
                let previous = rest.index(before: start)
                let character = rest[previous]
                guard character.isASCII, character.isLetter || character.isNumber || "+-.".contains(character) else { break }
                start = previous
            }
            var end = rest[separator.upperBound...].firstIndex { $0.isWhitespace || "\"'<>`".contains($0) } ?? rest.endIndex
            while end > separator.upperBound, ".,;:!?)]}".contains(rest[rest.index(before: end)]) {
                end = rest.index(before: end)
            }
            output += rest[..<start]
            output += urlText(String(rest[start..<end]))
            // `end` is at or past the end of `://`, so the loop always advances.
            rest = rest[end...]
        }
        output += rest
        return output
    }

    private static func lowercased(_ names: Set<String>) -> Set<String> {
        Set(names.map { $0.lowercased() })
    }
}

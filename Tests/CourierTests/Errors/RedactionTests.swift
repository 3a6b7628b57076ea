import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class RedactionTests: XCTestCase {
    private func url(
        _ text: String, _ redaction: Redaction = .default, file: StaticString = #filePath, line: UInt = #line
    )
        -> String
    {
        guard let url = URL(string: text) else {
            XCTFail("not a URL: \(text)", file: file, line: line)
            return ""
        }
        return redaction.url(url)
    }

    // MARK: Headers

    func testDefaultHeadersAreMaskedInAnyCase() {
        let redaction = Redaction.default
        let masked = [
            "Authorization", "authorization", "AUTHORIZATION", "Proxy-Authorization", "cookie", "Set-Cookie", "SET-COOKIE",
            // The common headers that carry a key or a token by themselves.
            "X-Api-Key", "x-api-key", "Api-Key", "X-Goog-Api-Key", "Ocp-Apim-Subscription-Key", "X-Functions-Key",
            "X-Amz-Security-Token", "X-Auth-Token", "X-Subject-Token", "X-Vault-Token", "Private-Token", "X-Access-Token",
        ]
        for name in masked {
            XCTAssertEqual(redaction.headerValue(name: name, value: "s3cret"), "***", name)
        }
        for name in ["Accept", "Content-Type", "Authorization-Hint", "WWW-Authenticate", "X-Request-Id", "X-Amz-Date"] {
            XCTAssertEqual(redaction.headerValue(name: name, value: "shown"), "shown", name)
        }
    }

    func testHeadersAreSortedByLowerCasedNameAndRedacted() {
        let fields = ["b": "1", "Set-Cookie": "id=s3cret; Path=/", "A": "2", "Cookie": "a=s3cret", "accept": "3"]
        let shown = Redaction.default.headers(fields)
        XCTAssertEqual(shown.map(\.name), ["A", "accept", "b", "Cookie", "Set-Cookie"])
        XCTAssertEqual(shown.map(\.value), ["2", "3", "1", "***", "***"])
    }

    func testURLValuedHeadersHaveTheirURLMasked() {
        let redaction = Redaction.default
        XCTAssertEqual(
            redaction.headerValue(name: "Location", value: "https://u:p@h/next?X-Amz-Signature=abc&part=2"),
            "https://***@h/next?X-Amz-Signature=***&part=2")
        XCTAssertEqual(redaction.headerValue(name: "referer", value: "/relative?token=t"), "/relative?token=***")
        XCTAssertEqual(Redaction.none.headerValue(name: "Location", value: "https://u:p@h/?token=t"), "https://u:p@h/?token=t")
    }

    // MARK: User info

    func testUserInfoIsMaskedWhole() {
        let table: [(url: String, shown: String)] = [
            ("https://user@h/p", "https://***@h/p"),
            ("https://user:hunter2@h/p?q=1", "https://***@h/p?q=1"),
            ("https://us%40er:p%3Ass@h:8443/", "https://***@h:8443/"),
            ("https://:only-password@h/", "https://***@h/"),
            ("http://[::1]:8080/p", "http://[::1]:8080/p"),
            ("http://h/p@q", "http://h/p@q"),
            ("http://h?x=a@b", "http://h?x=a@b"),
            ("http://h/p", "http://h/p"),
        ]
        for row in table {
            XCTAssertEqual(url(row.url), row.shown, row.url)
        }
    }

    /// libcurl and Foundation end the user info at the authority's last `@`, so a password may
    /// hold one unencoded; none of it may show.
    func testUserInfoEndsAtTheLastAtOfTheAuthority() {
        let table: [(text: String, shown: String, line: UInt)] = [
            ("http://u:P@W@host/x?token=T", "http://***@host/x?token=***", #line),
            ("http://a@b@c@h:8080/", "http://***@h:8080/", #line),
            ("https://u:p@ss@h", "https://***@h", #line),
            ("https://u:p@ss@h?x=1#y", "https://***@h?x=1#y", #line),
            // The authority ends at the first `/`, `?` or `#`, as in libcurl: an `@` after it is the path's.
            ("http://u:pw@h/a@b", "http://***@h/a@b", #line),
            ("http://h/p@q?token=t", "http://h/p@q?token=***", #line),
            // What Foundation makes of the unencoded `@`: the same text, encoded.
            ("http://u:P%40W@host/x", "http://***@host/x", #line),
        ]
        for row in table {
            XCTAssertEqual(Redaction.default.urlText(row.text), row.shown, row.text, line: row.line)
        }
        // Foundation reads it the same way: the last `@` ends the user info.
        let parsed = URL(string: "http://u:P@W@host/x?token=T")
        XCTAssertEqual(parsed?.host, "host")
        XCTAssertEqual(parsed.map(Redaction.default.url), "http://***@host/x?token=***")
    }

    // MARK: Query parameters

    /// The signatures and credentials of presigned URLs are working credentials until they expire.
    func testPresignedURLCredentialsAreMaskedByDefault() {
        let table: [(url: String, shown: String, line: UInt)] = [
            // AWS SigV4 (S3), with a session token.
            (
                "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F20240101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20240101T000000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Security-Token=FQo&X-Amz-Signature=abc123",
                "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=***&X-Amz-Date=20240101T000000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Security-Token=***&X-Amz-Signature=***",
                #line
            ),
            // AWS SigV2.
            (
                "https://b.s3.amazonaws.com/k?AWSAccessKeyId=AKIA&Expires=1700000000&Signature=abc%2B",
                "https://b.s3.amazonaws.com/k?AWSAccessKeyId=***&Expires=1700000000&Signature=***", #line
            ),
            // Google Cloud Storage V4 and V2.
            (
                "https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=sa%40p.iam&X-Goog-Date=20240101T000000Z&X-Goog-Expires=900&X-Goog-SignedHeaders=host&X-Goog-Signature=def",
                "https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=***&X-Goog-Date=20240101T000000Z&X-Goog-Expires=900&X-Goog-SignedHeaders=host&X-Goog-Signature=***",
                #line
            ),
            (
                "https://storage.googleapis.com/b/o?GoogleAccessId=sa%40p&Expires=1700000000&Signature=ghi",
                "https://storage.googleapis.com/b/o?GoogleAccessId=***&Expires=1700000000&Signature=***", #line
            ),
            // An Azure shared access signature: only `sig` is the secret.
            (
                "https://a.blob.core.windows.net/c/b?sv=2022-11-02&se=2024-01-01&sr=b&sp=r&sig=jkl%3D",
                "https://a.blob.core.windows.net/c/b?sv=2022-11-02&se=2024-01-01&sr=b&sp=r&sig=***", #line
            ),
            // GitLab's private_token; names percent-encoded or in any case.
            (
                "https://gitlab.example/api/v4/projects?private_token=glpat", "https://gitlab.example/api/v4/projects?private_token=***",
                #line
            ),
            ("http://h/?X%2DAmz%2DSignature=a&x%2damz%2dcredential=b", "http://h/?X%2DAmz%2DSignature=***&x%2damz%2dcredential=***", #line),
            ("http://h/?TOKEN=a&Sig=b", "http://h/?TOKEN=***&Sig=***", #line),
            // In the fragment, too.
            ("http://h/cb#id_token=a&state=s", "http://h/cb#id_token=***&state=s", #line),
        ]
        for row in table {
            XCTAssertEqual(url(row.url), row.shown, row.url, line: row.line)
        }
    }

    func testMatchingQueryParametersAreMaskedAndTheRestKeptByteForByte() {
        let table: [(url: String, shown: String)] = [
            // Any case, and after percent-decoding the name.
            ("http://h/p?Access_Token=s3cret&page=2", "http://h/p?Access_Token=***&page=2"),
            ("http://h/p?ACCESS%5FTOKEN=s3cret", "http://h/p?ACCESS%5FTOKEN=***"),
            (
                "http://h/p?X-Amz-Signature=ab%2Fcd&X-Amz-Credential=AKIA%2F1&X-Amz-Date=20240101",
                "http://h/p?X-Amz-Signature=***&X-Amz-Credential=***&X-Amz-Date=20240101"
            ),
            // Repeated names, order, parameters without `=` or without a value, empty pieces.
            ("http://h/p?token=a&x=1&token=b&flag&key=&&z=%20", "http://h/p?token=***&x=1&token=***&flag&key=&&z=%20"),
            // A value that holds `=`: everything after the first `=` is the value.
            ("http://h/?sig=a=b=c&b=1", "http://h/?sig=***&b=1"),
            // Non-matching text kept exactly, encoding and `+` included.
            ("http://h/p?q=a+b%2Bc&sort=-date&tokenize=yes", "http://h/p?q=a+b%2Bc&sort=-date&tokenize=yes"),
            // Empty query, no query, a fragment (masked the same way: OAuth's implicit flow).
            ("http://h/p?", "http://h/p?"),
            ("http://h/p?#", "http://h/p?#"),
            ("http://h/p#section-2", "http://h/p#section-2"),
            ("http://h/cb?state=1#access_token=s3cret&token_type=bearer", "http://h/cb?state=1#access_token=***&token_type=bearer"),
            ("http://h/p#/callback?token=x&b", "http://h/p#/callback?token=***&b"),
        ]
        for row in table {
            XCTAssertEqual(url(row.url), row.shown, row.url)
        }
    }

    func testNoneKeepsEverything() {
        let texts = [
            "https://user:hunter2@h/p?access_token=s3cret&x=1#access_token=y",
            "https://user@h/",
        ]
        for text in texts {
            XCTAssertEqual(url(text, .none), text)
        }
        XCTAssertEqual(Redaction.none.headerValue(name: "Authorization", value: "Bearer s3cret"), "Bearer s3cret")
        XCTAssertEqual(Redaction.none.headers(["Cookie": "a=1"]).map(\.value), ["a=1"])
    }

    func testCustomListsAndMask() {
        let redaction = Redaction(headers: ["X-Api-Key"], queryParameters: ["Session"], mask: "[redacted]")
        XCTAssertEqual(redaction.headerValue(name: "x-api-key", value: "k"), "[redacted]")
        XCTAssertEqual(redaction.headerValue(name: "Authorization", value: "Bearer b"), "Bearer b", "a custom list replaces the default")
        XCTAssertEqual(url("https://u@h/?session=1&token=2", redaction), "https://[redacted]@h/?session=[redacted]&token=2")

        let added = Redaction.default.adding(headers: ["X-Api-Key"]).adding(queryParameters: ["SESSION"])
        XCTAssertEqual(added.headerValue(name: "X-API-KEY", value: "k"), "***")
        XCTAssertEqual(added.headerValue(name: "Cookie", value: "c"), "***")
        XCTAssertEqual(url("http://h/?session=1&token=2", added), "http://h/?session=***&token=***")
        XCTAssertTrue(added.headers.contains("x-api-key"), "stored lower-cased")
        XCTAssertTrue(added.queryParameters.contains("session"))

        XCTAssertEqual(Redaction(headers: ["Authorization"]), Redaction(headers: ["authorization"]), "names compare case-insensitively")
        XCTAssertNotEqual(Redaction.default, Redaction.none)
        var userInfoKept = Redaction.default
        userInfoKept.masksUserInfo = false
        XCTAssertEqual(url("https://u:p@h/?token=t", userInfoKept), "https://u:p@h/?token=***")
    }

    func testOddTextNeverCrashesOrLosesCharacters() {
        let redaction = Redaction.default
        let odd = [
            "", "?", "#", "@", "://", "http://", "http://@", "http://@/", "http://user@", "h:", ":x", "1http://u@h",
            "http://h/?=", "http://h/?=secret", "http://h/??token=a", "mailto:someone@example.com?subject=hi",
            "http://h/p?token", "http://h/p?&&&", "http://h/é?ключ=значение&token=é", "file:///tmp/a?b#c",
        ]
        for text in odd {
            let shown = redaction.urlText(text)
            XCTAssertEqual(Redaction.none.urlText(text), text, text)
            if !text.contains("@"), !text.contains("token=") {
                XCTAssertEqual(shown, text, "nothing to mask in \(text)")
            }
        }
        XCTAssertEqual(redaction.urlText("http://user@"), "http://***@")
        XCTAssertEqual(
            redaction.urlText("http://h/p?%zz=1&token=x"), "http://h/p?%zz=1&token=***", "a malformed escape is compared as written")
        XCTAssertEqual(redaction.urlText("http://h/??token=a"), "http://h/??token=a", "the name is `?token`")
        XCTAssertEqual(redaction.urlText("http://h/é?token=é"), "http://h/é?token=***")
        XCTAssertEqual(redaction.urlText("mailto:someone@example.com?token=1"), "mailto:someone@example.com?token=***")
    }

    func testURLsInsideTextAreMasked() {
        let redaction = Redaction.default
        XCTAssertEqual(
            redaction.redactingURLs(in: "refused a redirect to https://u:p@h/x?token=t: a redirect loop"),
            "refused a redirect to https://***@h/x?token=***: a redirect loop")
        XCTAssertEqual(
            redaction.redactingURLs(in: "(\"http://h/?sig=1\") and <ftp://a@b/>"),
            "(\"http://h/?sig=***\") and <ftp://***@b/>")
        XCTAssertEqual(redaction.redactingURLs(in: "no URL here: ://, :// x"), "no URL here: ://, :// x")
        XCTAssertEqual(redaction.redactingURLs(in: "plain text"), "plain text")
        XCTAssertEqual(
            redaction.redactingURLs(in: "see http://h/?code=1. Or (http://u@h/)."), "see http://h/?code=***. Or (http://***@h/).")
    }

    /// The shapes of the lines people see: courier's error lines, a URLError's text (it names the
    /// failing URL in its user info), a usage error quoting its argument.
    func testURLsInsideMessagesPeopleReadAreMasked() {
        let table: [(text: String, shown: String, line: UInt)] = [
            (
                "courier: HTTP 404 Not Found from http://h:1/missing?token=T&X-Amz-Signature=S",
                "courier: HTTP 404 Not Found from http://h:1/missing?token=***&X-Amz-Signature=***", #line
            ),
            (
                "courier: network error: could not connect (http://u:P@W@h:1/x?token=T); nothing was written to stdout",
                "courier: network error: could not connect (http://***@h:1/x?token=***); nothing was written to stdout", #line
            ),
            (
                "Error Domain=NSURLErrorDomain Code=-1004 \"(null)\" UserInfo={NSErrorFailingURLKey=http://u:p@h/x?sig=S, NSErrorFailingURLStringKey=http://u:p@h/x?sig=S}",
                "Error Domain=NSURLErrorDomain Code=-1004 \"(null)\" UserInfo={NSErrorFailingURLKey=http://***@h/x?sig=***, NSErrorFailingURLStringKey=http://***@h/x?sig=***}",
                #line
            ),
            (
                "courier: 'ftp://u:p@h/?token=T' is not an http:// or https:// URL",
                "courier: 'ftp://***@h/?token=***' is not an http:// or https:// URL", #line
            ),
            ("two: http://h/?key=A\nhttps://h/?apikey=B\n", "two: http://h/?key=***\nhttps://h/?apikey=***\n", #line),
        ]
        for row in table {
            XCTAssertEqual(Redaction.default.redactingURLs(in: row.text), row.shown, row.text, line: row.line)
        }
        let custom = Redaction.default.adding(queryParameters: ["session"])
        XCTAssertEqual(custom.redactingURLs(in: "from http://h/?session=A&b=1"), "from http://h/?session=***&b=1")
    }
}

import XCTest
@testable import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class URLEncodedFormSerializerTests: XCTestCase {
    private typealias Serializer = URLEncodedFormSerializer

    private func encode(_ parameters: Parameters, _ serializer: Serializer = .default) throws -> String {
        try serializer.encode(parameters)
    }

    // MARK: Escaping

    func testEscapingOfEachClassOfCharacters() throws {
        let table: [(class: String, input: String, expected: String)] = [
            ("unreserved", "AZaz09-._~", "AZaz09-._~"),
            ("gen-delims", ":/?#[]@", "%3A%2F%3F%23%5B%5D%40"),
            ("sub-delims", "!$&'()*+,;=", "%21%24%26%27%28%29%2A%2B%2C%3B%3D"),
            ("space and percent", " %", "%20%25"),
            ("other printable", "\"<>\\^`{|}", "%22%3C%3E%5C%5E%60%7B%7C%7D"),
            ("controls", "\u{0}\u{1}\t\n\r\u{1F}\u{7F}", "%00%01%09%0A%0D%1F%7F"),
            ("two-byte UTF-8", "é", "%C3%A9"),
            ("three-byte UTF-8", "東", "%E6%9D%B1"),
            ("four-byte UTF-8", "🚀", "%F0%9F%9A%80"),
            ("plus is not a space", "a+b c", "a%2Bb%20c"),
        ]
        for row in table {
            XCTAssertEqual(try encode(["k": row.input]), "k=\(row.expected)", "value, \(row.class)")
            XCTAssertEqual(try encode([row.input: "v"]), "\(row.expected)=v", "key, \(row.class)")
        }
    }

    func testEveryASCIIByteIsLiteralOnlyWhenUnreserved() throws {
        let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
        for byte in UInt8(0)...UInt8(127) {
            let encoded = String(try encode(["k": String(decoding: [byte], as: UTF8.self)]).dropFirst(2))
            if unreserved.contains(byte) {
                XCTAssertEqual(Array(encoded.utf8), [byte], "byte \(byte)")
            } else {
                XCTAssertEqual(encoded.count, 3, "byte \(byte): \(encoded)")
                XCTAssertEqual(encoded.first, "%", "byte \(byte)")
                XCTAssertEqual(UInt8(encoded.dropFirst(), radix: 16), byte, "byte \(byte): \(encoded)")
                XCTAssertEqual(encoded, encoded.uppercased(), "byte \(byte): hex digits are upper-case")
            }
        }
    }

    // MARK: Structure

    func testNestedDictionariesUseBracketedKeys() throws {
        let table: [(Parameters, String)] = [
            (["a": ["b": "x"] as Parameters], "a%5Bb%5D=x"),
            (["a": ["b": ["c": "x"] as Parameters] as Parameters], "a%5Bb%5D%5Bc%5D=x"),
            (["a": ["z": 1, "b": 2] as Parameters, "0": "first"], "0=first&a%5Bb%5D=2&a%5Bz%5D=1"),
            (["a": ["b c": "d&e"] as Parameters], "a%5Bb%20c%5D=d%26e"),
            (["a": [:] as Parameters, "b": [] as [any Sendable], "c": "kept"], "c=kept"),
        ]
        for (parameters, expected) in table {
            XCTAssertEqual(try encode(parameters), expected)
        }
    }

    func testArraysInEachArrayEncoding() throws {
        let parameters: Parameters = [
            "a": [1, "two"] as [any Sendable],
            "m": [["k": "v", "j": true] as Parameters, ["k": "w"] as Parameters] as [any Sendable],
            "n": [[1, 2] as [any Sendable]] as [any Sendable],
        ]
        let table: [(Serializer.ArrayEncoding, String)] = [
            (.brackets, "a[]=1&a[]=two&m[][j]=1&m[][k]=v&m[][k]=w&n[][]=1&n[][]=2"),
            (.noBrackets, "a=1&a=two&m[j]=1&m[k]=v&m[k]=w&n=1&n=2"),
            (.indexInBrackets, "a[0]=1&a[1]=two&m[0][j]=1&m[0][k]=v&m[1][k]=w&n[0][0]=1&n[0][1]=2"),
        ]
        for (arrayEncoding, readable) in table {
            let expected = readable.replacingOccurrences(of: "[", with: "%5B").replacingOccurrences(of: "]", with: "%5D")
            XCTAssertEqual(try encode(parameters, Serializer(arrayEncoding: arrayEncoding)), expected, "\(arrayEncoding)")
        }
    }

    // MARK: Scalars

    func testBoolsInBothEncodingsIncludingJSONSerializationBooleans() throws {
        let parsed = try JSONSerialization.jsonObject(with: Data(#"{"t":true,"f":false,"one":1,"zero":0}"#.utf8))
        let json = try XCTUnwrap(parsed as? [String: Any])
        let table: [(name: String, value: any Sendable, numeric: String, literal: String)] = [
            ("Swift true", true, "1", "true"),
            ("Swift false", false, "0", "false"),
            ("NSNumber(value: true)", NSNumber(value: true), "1", "true"),
            ("JSON true", json["t"] as! NSNumber, "1", "true"),
            ("JSON false", json["f"] as! NSNumber, "0", "false"),
            // Numbers that bridge to Bool must stay numbers.
            ("JSON 1", json["one"] as! NSNumber, "1", "1"),
            ("JSON 0", json["zero"] as! NSNumber, "0", "0"),
            ("Int 1", 1, "1", "1"),
            ("Int8 1", Int8(1), "1", "1"),
            ("NSNumber(Int8 1)", NSNumber(value: Int8(1)), "1", "1"),
            ("NSNumber(UInt8 0)", NSNumber(value: UInt8(0)), "0", "0"),
            ("Double 1", 1.0, "1.0", "1.0"),
        ]
        for row in table {
            XCTAssertEqual(try encode(["b": row.value], Serializer(boolEncoding: .numeric)), "b=\(row.numeric)", row.name)
            XCTAssertEqual(try encode(["b": row.value], Serializer(boolEncoding: .literal)), "b=\(row.literal)", row.name)
        }
    }

    func testNumbersUseTheirNaturalDescription() throws {
        let table: [(value: any Sendable, expected: String)] = [
            (0, "0"), (-42, "-42"), (Int.max, "9223372036854775807"), (Int.min, "-9223372036854775808"),
            (UInt64.max, "18446744073709551615"), (Int16(-7), "-7"), (UInt8(255), "255"),
            (0.1, "0.1"), (-2.5, "-2.5"), (1e20, "1e%2B20"), (1e-7, "1e-07"), (Float(0.1), "0.1"),
            (Decimal(string: "12.50")!, "12.5"), (NSNumber(value: 3.25), "3.25"), (NSNumber(value: Int64.min), "-9223372036854775808"),
        ]
        for row in table {
            XCTAssertEqual(try encode(["n": row.value]), "n=\(row.expected)", "\(type(of: row.value)) \(row.value)")
        }
    }

    func testDatesInEachDateEncoding() throws {
        let whole = Date(timeIntervalSince1970: 1_700_000_000)
        let half = Date(timeIntervalSince1970: 1_700_000_000.5)
        let table: [(name: String, encoding: Serializer.DateEncoding, whole: String, half: String)] = [
            ("iso8601", .iso8601, "2023-11-14T22%3A13%3A20Z", "2023-11-14T22%3A13%3A20Z"),
            ("seconds", .secondsSince1970, "1700000000", "1700000000.5"),
            ("milliseconds", .millisecondsSince1970, "1700000000000", "1700000000500"),
            ("custom", .custom { "day \(Int($0.timeIntervalSince1970) / 86_400)" }, "day%2019675", "day%2019675"),
        ]
        for row in table {
            let serializer = Serializer(dateEncoding: row.encoding)
            XCTAssertEqual(try encode(["d": whole], serializer), "d=\(row.whole)", row.name)
            XCTAssertEqual(try encode(["d": [half] as [any Sendable]], serializer), "d%5B%5D=\(row.half)", row.name)
        }
    }

    func testNullAndNilBecomeAnEmptyValue() throws {
        let missing: String? = nil
        let present: Int? = 5
        XCTAssertEqual(
            try encode(["a": NSNull(), "b": missing as any Sendable, "c": present as any Sendable, "d": ["e": NSNull()] as Parameters]),
            "a=&b=&c=5&d%5Be%5D=")
    }

    func testUnsupportedValueTypesAreErrorsNamingTheKey() {
        struct Custom: Sendable {}
        let table: [(Parameters, key: String)] = [
            (["top": Custom()], "\"top\""),
            (["user": ["avatar": URL(string: "http://x/")!] as Parameters], "\"user[avatar]\""),
            (["list": [1, Custom()] as [any Sendable]], "\"list[1]\""),
            (["set": Set([1, 2])], "\"set\""),
            (["intKeys": [1: "a"]], "\"intKeys\""),
            (["data": Data([1])], "\"data\""),
        ]
        for (parameters, key) in table {
            RequestFixtures.assertInvalidRequest(try Serializer.default.encode(parameters), mentioning: [key], key)
            RequestFixtures.assertInvalidRequest(
                try Serializer.default.serialize(RequestFixtures.request(method: "POST"), with: parameters), mentioning: [key], key)
        }
    }

    // MARK: Determinism

    func testOutputIsSortedAndIndependentOfInsertionOrder() throws {
        let keys = (0..<300).map { "key\($0)" }
        var forward: Parameters = [:]
        var nestedForward: Parameters = [:]
        for key in keys {
            forward[key] = key
            nestedForward[key] = 1
        }
        forward["nested"] = nestedForward
        var backward: Parameters = [:]
        var nestedBackward: Parameters = [:]
        for key in keys.reversed() {
            backward[key] = key
            nestedBackward[key] = 1
        }
        backward["nested"] = nestedBackward
        let encoded = try encode(forward)
        XCTAssertEqual(encoded, try encode(backward))
        let names = encoded.split(separator: "&").map { String($0.prefix { $0 != "=" }) }
        let topLevel = names.filter { !$0.hasPrefix("nested") }
        XCTAssertEqual(topLevel, keys.sorted())
        XCTAssertEqual(names.filter { $0.hasPrefix("nested") }, keys.sorted().map { "nested%5B\($0)%5D" })
        XCTAssertEqual(names.count, 600)
    }

    // MARK: Placement

    func testQueryKeepsTheExistingQueryAndAddsNoEmptyQuestionMark() throws {
        let table: [(url: String, parameters: Parameters, expected: String)] = [
            ("http://h/p", ["a": 1], "http://h/p?a=1"),
            ("http://h/p?x=1", ["a": 1], "http://h/p?x=1&a=1"),
            ("http://h/p?x=%20y&z", ["a": "b c"], "http://h/p?x=%20y&z&a=b%20c"),
            ("http://h/p?x=1&", ["a": 1], "http://h/p?x=1&a=1"),
            ("http://h/p?", ["a": 1], "http://h/p?a=1"),
            ("http://h/p?x=1#frag", ["a": 1], "http://h/p?x=1&a=1#frag"),
            ("http://u:pw@h:8080/a/b/", ["a": 1, "b": 2], "http://u:pw@h:8080/a/b/?a=1&b=2"),
            ("http://h/p", [:], "http://h/p"),
            ("http://h/p?x=1", [:], "http://h/p?x=1"),
            ("http://h/p", ["empty": [] as [any Sendable]], "http://h/p"),
        ]
        for row in table {
            let serialized = try Serializer(destination: .queryString).serialize(
                RequestFixtures.request(row.url, method: "POST"), with: row.parameters)
            XCTAssertEqual(serialized.url?.absoluteString, row.expected, row.url)
            XCTAssertNil(serialized.httpBody, row.url)
            XCTAssertNil(serialized.value(forHTTPHeaderField: "Content-Type"), row.url)
        }
    }

    func testMethodDependentDestination() throws {
        let table: [(method: String, inQuery: Bool)] = [
            ("GET", true), ("HEAD", true), ("DELETE", true), ("get", true),
            ("POST", false), ("PUT", false), ("PATCH", false), ("OPTIONS", false), ("PROPFIND", false),
        ]
        for row in table {
            let serialized = try Serializer.default.serialize(RequestFixtures.request(method: row.method), with: ["a": "1"])
            XCTAssertEqual(serialized.url?.query, row.inQuery ? "a=1" : nil, row.method)
            XCTAssertEqual(RequestFixtures.body(serialized), row.inQuery ? nil : "a=1", row.method)
        }
    }

    func testBodySetsTheFormContentTypeOnlyWhenMissing() throws {
        let table: [(existing: (name: String, value: String)?, expected: String)] = [
            (nil, "application/x-www-form-urlencoded; charset=utf-8"),
            (("Content-Type", "application/vnd.custom+form"), "application/vnd.custom+form"),
            (("content-type", "text/plain"), "text/plain"),
        ]
        for row in table {
            var request = RequestFixtures.request("http://h/p?keep=1", method: "GET")
            if let existing = row.existing { request.setValue(existing.value, forHTTPHeaderField: existing.name) }
            let serialized = try Serializer(destination: .httpBody).serialize(request, with: ["a": [1, 2] as [any Sendable]])
            XCTAssertEqual(serialized.value(forHTTPHeaderField: "Content-Type"), row.expected)
            XCTAssertEqual(RequestFixtures.body(serialized), "a%5B%5D=1&a%5B%5D=2")
            XCTAssertEqual(serialized.url?.absoluteString, "http://h/p?keep=1", "the query is left alone")
        }
    }

    func testEmptyParametersInTheBodyGiveAnEmptyFormBody() throws {
        var request = RequestFixtures.request(method: "POST")
        request.httpBody = Data("old".utf8)
        let serialized = try Serializer.default.serialize(request, with: [:])
        XCTAssertEqual(serialized.httpBody, Data())
        XCTAssertEqual(serialized.value(forHTTPHeaderField: "Content-Type"), "application/x-www-form-urlencoded; charset=utf-8")
    }

    func testQueryWithoutAURLIsAnError() {
        var request = RequestFixtures.request()
        request.url = nil
        RequestFixtures.assertInvalidRequest(try Serializer.default.serialize(request, with: ["a": 1]), mentioning: ["no URL"])
    }

    // MARK: Encodable

    private struct Profile: Encodable {
        struct Address: Encodable {
            let city: String
            let zip: String?
        }
        let name: String
        let admin: Bool
        let visits: Int
        let ratio: Double
        let joined: Date
        let tags: [String]
        let address: Address
        let nickname: String?
    }

    private let profile = Profile(
        name: "Zoë & co", admin: true, visits: 3, ratio: 0.25, joined: Date(timeIntervalSince1970: 1_700_000_000),
        tags: ["a", "b"], address: .init(city: "Köln", zip: nil), nickname: nil)

    func testEncodableValuesEncodeLikeParameters() throws {
        let table: [(Serializer, String)] = [
            (
                .default,
                "address[city]=K%C3%B6ln&admin=1&joined=2023-11-14T22%3A13%3A20Z&name=Zo%C3%AB%20%26%20co&ratio=0.25&tags[]=a&tags[]=b&visits=3"
            ),
            (
                Serializer(arrayEncoding: .indexInBrackets, boolEncoding: .literal, dateEncoding: .millisecondsSince1970),
                "address[city]=K%C3%B6ln&admin=true&joined=1700000000000&name=Zo%C3%AB%20%26%20co&ratio=0.25&tags[0]=a&tags[1]=b&visits=3"
            ),
        ]
        for (serializer, readable) in table {
            let expected = readable.replacingOccurrences(of: "[", with: "%5B").replacingOccurrences(of: "]", with: "%5D")
            let serialized = try serializer.serialize(RequestFixtures.request(method: "POST"), encoding: profile)
            XCTAssertEqual(RequestFixtures.body(serialized), expected)
            XCTAssertEqual(try serializer.serialize(RequestFixtures.request(), encoding: profile).url?.query, expected)
        }
    }

    func testEncodableMatchesTheEquivalentParameters() throws {
        let parameters: Parameters = [
            "name": "Zoë & co", "admin": true, "visits": 3, "ratio": 0.25, "joined": Date(timeIntervalSince1970: 1_700_000_000),
            "tags": ["a", "b"], "address": ["city": "Köln"] as Parameters,
        ]
        for dateEncoding: Serializer.DateEncoding in [.iso8601, .secondsSince1970, .millisecondsSince1970] {
            let serializer = Serializer(boolEncoding: .literal, dateEncoding: dateEncoding)
            XCTAssertEqual(
                try serializer.serialize(RequestFixtures.request(), encoding: profile).url?.query, try serializer.encode(parameters))
        }
    }

    func testEncodableThatIsNotKeyedOrNotEncodableIsAnError() {
        struct Ratio: Encodable { let value: Double }
        RequestFixtures.assertInvalidRequest(
            try Serializer.default.serialize(RequestFixtures.request(), encoding: [1, 2]), mentioning: ["top level"])
        RequestFixtures.assertInvalidRequest(
            try Serializer.default.serialize(RequestFixtures.request(), encoding: "text"), mentioning: ["top level"])
        RequestFixtures.assertInvalidRequest(
            try Serializer.default.serialize(RequestFixtures.request(), encoding: Ratio(value: .nan)), mentioning: ["Ratio"])
    }

    func testDefaultConfiguration() throws {
        let serializer = Serializer.default
        XCTAssertEqual(serializer.arrayEncoding, .brackets)
        XCTAssertEqual(serializer.boolEncoding, .numeric)
        XCTAssertEqual(serializer.destination, .methodDependent)
        guard case .iso8601 = serializer.dateEncoding else { return XCTFail("dates: \(serializer.dateEncoding)") }
    }
}

/// `permessage-deflate` (RFC 7692): messages compressed with DEFLATE, offered in the handshake
/// when ``WebSocketOptions/compression`` is set (as it is by default; `nil` turns it off). The server's messages are
/// decompressed with the context it chose; Courier's own are always compressed without context
/// takeover (each message on its own, the offer's `client_no_context_takeover`), so messages
/// sent from several tasks at once need no common compression order.
///
/// zlib comes from the system (`libz.so.1`, which FoundationNetworking's libcurl links), bound at
/// run time; where it cannot be loaded, the extension is not offered.
public struct WebSocketCompression: Sendable, Equatable {
    /// Asks the server to compress each message on its own (`server_no_context_takeover`): less
    /// memory held between messages on both sides, less compression for similar messages.
    public var serverNoContextTakeover: Bool
    /// Asks the server to use a window of at most 2^bits bytes (`server_max_window_bits`, 8–15;
    /// `nil`: the server's choice, up to 32 KiB).
    public var serverMaximumWindowBits: Int?

    /// `permessage-deflate` with the server's context kept between messages and its window left
    /// to it.
    public init(serverNoContextTakeover: Bool = false, serverMaximumWindowBits: Int? = nil) {
        self.serverNoContextTakeover = serverNoContextTakeover
        self.serverMaximumWindowBits = serverMaximumWindowBits.map { min(15, max(8, $0)) }
    }

    /// The `Sec-WebSocket-Extensions` offer.
    var offer: String {
        // client_max_window_bits without a value: the server may ask for a smaller window (§7.1.2.2).
        var parameters = ["permessage-deflate", "client_no_context_takeover", "client_max_window_bits"]
        if serverNoContextTakeover { parameters.append("server_no_context_takeover") }
        if let bits = serverMaximumWindowBits { parameters.append("server_max_window_bits=\(bits)") }
        return parameters.joined(separator: "; ")
    }

    /// What the server accepted: whether it resets its compression context after each message,
    /// and the window Courier's compressor may use.
    struct Agreement: Equatable, Sendable {
        /// The server compresses each message on its own (the decompressor resets after each).
        var serverNoContextTakeover: Bool
        /// The window the server allows Courier's compressor, 8–15 (15 unless it asked for less).
        var clientMaximumWindowBits = 15
    }

    /// The server's `Sec-WebSocket-Extensions` elements checked against this offer (RFC 7692
    /// §7.1): `nil` when it accepted none; an ``Agreement`` for one `permessage-deflate` whose
    /// parameters are known, each once, with values where they need one; a refusal saying why
    /// for anything else (another extension, a parameter not offered or malformed).
    func agreement(from elements: [String]) -> Result<Agreement?, WebSocketExtensionRefusal> {
        guard !elements.isEmpty else { return .success(nil) }
        guard elements.count == 1 else {
            return .failure(.init("the server accepted \(elements.count) extensions; one permessage-deflate was offered"))
        }
        var parts = elements[0].split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.first?.lowercased() == "permessage-deflate" else {
            return .failure(.init("the server chose an extension the client did not offer: \(elements[0])"))
        }
        parts.removeFirst()
        var seen: Set<String> = []
        var agreement = Agreement(serverNoContextTakeover: false)
        for part in parts {
            let pieces = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            let name = pieces[0].lowercased()
            var value = pieces.count > 1 ? pieces[1] : nil
            if let quoted = value, quoted.count >= 2, quoted.hasPrefix("\""), quoted.hasSuffix("\"") {
                value = String(quoted.dropFirst().dropLast())
            }
            guard seen.insert(name).inserted else {
                return .failure(.init("the server's permessage-deflate names \(name) twice"))
            }
            switch name {
            case "server_no_context_takeover", "client_no_context_takeover":
                guard value == nil else { return .failure(.init("the server's \(name) has a value")) }
                if name == "server_no_context_takeover" { agreement.serverNoContextTakeover = true }
            case "server_max_window_bits", "client_max_window_bits":
                guard let text = value, text.allSatisfy(\.isASCII), let bits = Int(text), (8...15).contains(bits),
                    text.first != "0"
                else { return .failure(.init("the server's \(name) is not 8 to 15")) }
                if name == "client_max_window_bits" {
                    agreement.clientMaximumWindowBits = bits
                } else if let asked = serverMaximumWindowBits, bits > asked {
                    return .failure(.init("the server's server_max_window_bits=\(bits) is above the \(asked) asked for"))
                }
            default:
                return .failure(.init("the server's permessage-deflate has an unknown parameter: \(part)"))
            }
        }
        return .success(agreement)
    }
}

/// Why a server's extension answer was refused (a sentence for the error).
struct WebSocketExtensionRefusal: Error, Equatable {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

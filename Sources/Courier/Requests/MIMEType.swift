import Foundation

/// Media types for file names, for the `Content-Type` of multipart file parts.
public enum MIMEType {
    /// The type for content of unknown kind.
    static let octetStream = "application/octet-stream"

    /// A built-in table of common extensions (txt, html, css, js, json, xml, csv, pdf, zip, gz,
    /// tar, png, jpg/jpeg, gif, webp, svg, mp3, mp4, wav, …), case-insensitive;
    /// "application/octet-stream" otherwise.
    ///
    /// A leading dot is ignored (`".PNG"` and `"png"` both give `image/png`). The table is
    /// built in rather than read from `/etc/mime.types`, so the same file is labelled the same way
    /// on every machine.
    public static func forPathExtension(_ ext: String) -> String {
        let key = ext.hasPrefix(".") ? String(ext.dropFirst()) : ext
        return table[key.lowercased()] ?? octetStream
    }

    /// The type for a file name's extension: what follows its last dot, unless that dot starts
    /// the name (`.profile` has none).
    static func forFileName(_ fileName: String) -> String {
        let lastComponent = fileName.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard let dot = lastComponent.lastIndex(of: "."), dot != lastComponent.startIndex else { return octetStream }
        return forPathExtension(String(lastComponent[lastComponent.index(after: dot)...]))
    }

    private static let table: [String: String] = [
        // Text and code
        "txt": "text/plain", "text": "text/plain", "log": "text/plain",
        "htm": "text/html", "html": "text/html",
        "css": "text/css",
        "js": "text/javascript", "mjs": "text/javascript",
        "csv": "text/csv",
        "md": "text/markdown", "markdown": "text/markdown",
        "ics": "text/calendar",
        "json": "application/json",
        "xml": "application/xml",
        "yaml": "application/yaml", "yml": "application/yaml",
        "wasm": "application/wasm",
        // Documents
        "pdf": "application/pdf",
        "rtf": "application/rtf",
        "epub": "application/epub+zip",
        "doc": "application/msword",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls": "application/vnd.ms-excel",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt": "application/vnd.ms-powerpoint",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "odt": "application/vnd.oasis.opendocument.text",
        "ods": "application/vnd.oasis.opendocument.spreadsheet",
        // Archives
        "zip": "application/zip",
        "gz": "application/gzip", "tgz": "application/gzip",
        "tar": "application/x-tar",
        "bz2": "application/x-bzip2",
        "xz": "application/x-xz",
        "zst": "application/zstd",
        "7z": "application/x-7z-compressed",
        // Images
        "png": "image/png",
        "jpg": "image/jpeg", "jpeg": "image/jpeg",
        "gif": "image/gif",
        "webp": "image/webp",
        "svg": "image/svg+xml",
        "avif": "image/avif",
        "heic": "image/heic",
        "bmp": "image/bmp",
        "tif": "image/tiff", "tiff": "image/tiff",
        "ico": "image/vnd.microsoft.icon",
        // Audio
        "mp3": "audio/mpeg",
        "wav": "audio/wav",
        "ogg": "audio/ogg", "oga": "audio/ogg", "opus": "audio/ogg",
        "flac": "audio/flac",
        "aac": "audio/aac",
        "m4a": "audio/mp4",
        // Video
        "mp4": "video/mp4", "m4v": "video/mp4",
        "mov": "video/quicktime",
        "webm": "video/webm",
        "mkv": "video/x-matroska",
        "avi": "video/x-msvideo",
        // Fonts
        "woff": "font/woff", "woff2": "font/woff2",
        "ttf": "font/ttf", "otf": "font/otf",
    ]
}

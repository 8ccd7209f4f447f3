package skillserver

import (
	"path"
	"strings"
)

// mimeTypes maps lowercase file extensions to the mimeType the server
// declares. A fixed table rather than mime.TypeByExtension: the system's
// mime.types differs between machines, and the listing should not.
var mimeTypes = map[string]string{
	".md":       "text/markdown",
	".markdown": "text/markdown",
	".txt":      "text/plain",
	".text":     "text/plain",
	".rst":      "text/x-rst",
	".csv":      "text/csv",
	".tsv":      "text/tab-separated-values",
	".html":     "text/html",
	".htm":      "text/html",
	".css":      "text/css",
	".xml":      "application/xml",
	".json":     "application/json",
	".jsonl":    "application/jsonl",
	".yaml":     "application/yaml",
	".yml":      "application/yaml",
	".toml":     "application/toml",
	".js":       "text/javascript",
	".mjs":      "text/javascript",
	".ts":       "text/x-typescript",
	".py":       "text/x-python",
	".sh":       "application/x-sh",
	".bash":     "application/x-sh",
	".go":       "text/x-go",
	".rb":       "text/x-ruby",
	".rs":       "text/x-rust",
	".java":     "text/x-java",
	".c":        "text/x-c",
	".h":        "text/x-c",
	".sql":      "application/sql",
	".svg":      "image/svg+xml",
	".png":      "image/png",
	".jpg":      "image/jpeg",
	".jpeg":     "image/jpeg",
	".gif":      "image/gif",
	".webp":     "image/webp",
	".ico":      "image/vnd.microsoft.icon",
	".pdf":      "application/pdf",
	".zip":      "application/zip",
	".gz":       "application/gzip",
	".tar":      "application/x-tar",
	".wasm":     "application/wasm",
	".mp3":      "audio/mpeg",
	".wav":      "audio/wav",
	".mp4":      "video/mp4",
}

// mimeType returns the declared mimeType of a file: text/markdown for
// SKILL.md, the table's type for a known extension, otherwise text/plain for
// files whose bytes are valid UTF-8 and application/octet-stream for the rest.
func mimeType(name string, utf8 bool) string {
	if name == "SKILL.md" {
		return "text/markdown"
	}
	if t, ok := mimeTypes[strings.ToLower(path.Ext(name))]; ok {
		return t
	}
	if utf8 {
		return "text/plain"
	}
	return "application/octet-stream"
}

package sim

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	_ "image/gif"  // DecodeConfig reads GIF sizes
	_ "image/jpeg" // and JPEG
	_ "image/png"  // and PNG
	"strings"
)

// Images in a generation prompt cost prefill as a vision encoder's tokens
// do: one token per 28×28-pixel patch (Qwen2-VL's merged patches; other
// encoders differ by a constant), at least minImageTokens. A picture whose
// size Go cannot read (WebP) costs one token per KiB of it. The scan is
// generic over the wire formats: OpenAI image_url and input_image data URLs,
// Anthropic base64 image sources, Gemini inline_data, Ollama images and
// markdown data-URL images in TGI's inputs.

const (
	imagePatch     = 28
	minImageTokens = 4
)

// imageUse is what a prompt's images cost.
type imageUse struct {
	Count, Bytes, Tokens int
}

// imageCost finds the images in a request body. Bodies without any of the
// markers are not parsed a second time.
func imageCost(body []byte) imageUse {
	var u imageUse
	if !bytes.Contains(body, []byte("base64")) && !bytes.Contains(body, []byte(`"images"`)) &&
		!bytes.Contains(body, []byte("inline_data")) && !bytes.Contains(body, []byte("inlineData")) {
		return u
	}
	var v any
	if json.Unmarshal(body, &v) != nil {
		return u
	}
	u.walk(v, "")
	return u
}

func (u *imageUse) walk(v any, key string) {
	switch x := v.(type) {
	case map[string]any:
		// Anthropic {type: base64, data}; Gemini {mime_type|mimeType, data}
		if d, ok := x["data"].(string); ok && (x["type"] == "base64" || x["mime_type"] != nil || x["mimeType"] != nil) {
			u.add(d)
		}
		for k, c := range x {
			if k != "data" {
				u.walk(c, k)
			}
		}
	case []any:
		for _, c := range x {
			if s, ok := c.(string); ok && key == "images" { // Ollama: raw base64 strings
				u.add(s)
				continue
			}
			u.walk(c, key)
		}
	case string:
		for rest := x; ; {
			i := strings.Index(rest, "data:image/")
			if i < 0 {
				return
			}
			rest = rest[i:]
			comma := strings.Index(rest, ";base64,")
			if comma < 0 {
				return
			}
			rest = rest[comma+len(";base64,"):]
			end := strings.IndexAny(rest, ")\" ")
			if end < 0 {
				end = len(rest)
			}
			u.add(rest[:end])
			rest = rest[end:]
		}
	}
}

func (u *imageUse) add(b64 string) {
	u.Count++
	n := base64.StdEncoding.DecodedLen(len(b64))
	u.Bytes += n
	cfg, _, err := image.DecodeConfig(base64.NewDecoder(base64.StdEncoding, strings.NewReader(b64)))
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		u.Tokens += max(n/1024, 1)
		return
	}
	patches := ((cfg.Width + imagePatch - 1) / imagePatch) * ((cfg.Height + imagePatch - 1) / imagePatch)
	u.Tokens += max(patches, minImageTokens)
}

// withoutDataURLs drops markdown data-URL images from prompt text (TGI's
// inputs carry them inline): they are counted as images, not as text.
func withoutDataURLs(prompt string) string {
	for {
		i := strings.Index(prompt, "![](data:image/")
		if i < 0 {
			return prompt
		}
		end := strings.IndexByte(prompt[i:], ')')
		if end < 0 {
			return prompt[:i]
		}
		prompt = prompt[:i] + prompt[i+end+1:]
	}
}

package protocol

import (
	"errors"
	"fmt"
)

// Image is one picture to send with a prompt, already base64-encoded (once,
// where it was made: a payload is encoded once, not once per protocol).
type Image struct {
	MIME   string // image/png, image/jpeg…
	Base64 string
}

// DataURL is the image as a data: URL (OpenAI's image_url, TGI's markdown).
func (im Image) DataURL() string { return "data:" + im.MIME + ";base64," + im.Base64 }

// AttachImages adds images to the last user turn of body, in the shape the
// protocol expects: OpenAI image_url data URLs (Chat) or input_image parts
// (Responses), Anthropic image blocks (before the text, as its guide
// advises), Gemini inline_data parts, Ollama's images list, a markdown image
// in TGI's inputs. It copies what it changes, never editing the caller's
// messages in place: the same body may be sent again (a fallback, a retry)
// and must not carry the images twice. A protocol without image input is an
// error naming it.
func AttachImages(protocol string, body map[string]any, imgs []Image) error {
	if len(imgs) == 0 {
		return nil
	}
	switch protocol {
	case "openai-chat":
		return attachToTurn(body, "messages", "content", func(content any) (any, error) {
			parts, err := textParts(content, "text")
			for _, im := range imgs {
				parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]any{"url": im.DataURL()}})
			}
			return parts, err
		})
	case "openai-responses":
		if s, ok := body["input"].(string); ok {
			body["input"] = []any{map[string]any{"role": "user", "content": s}}
		}
		return attachToTurn(body, "input", "content", func(content any) (any, error) {
			parts, err := textParts(content, "input_text")
			for _, im := range imgs {
				parts = append(parts, map[string]any{"type": "input_image", "image_url": im.DataURL()})
			}
			return parts, err
		})
	case "anthropic":
		return attachToTurn(body, "messages", "content", func(content any) (any, error) {
			text, err := textParts(content, "text")
			parts := make([]any, 0, len(imgs)+len(text))
			for _, im := range imgs {
				parts = append(parts, map[string]any{"type": "image", "source": map[string]any{
					"type": "base64", "media_type": im.MIME, "data": im.Base64,
				}})
			}
			return append(parts, text...), err
		})
	case "gemini":
		return attachToTurn(body, "contents", "parts", func(parts any) (any, error) {
			list, ok := parts.([]any)
			if !ok && parts != nil {
				return nil, errors.New("contents[].parts is not an array")
			}
			out := append(make([]any, 0, len(list)+len(imgs)), list...)
			for _, im := range imgs {
				out = append(out, map[string]any{"inline_data": map[string]any{"mime_type": im.MIME, "data": im.Base64}})
			}
			return out, nil
		})
	case "ollama":
		if _, chat := body["messages"]; !chat {
			body["images"] = appendImages(body["images"], imgs)
			return nil
		}
		return attachToTurn(body, "messages", "images", func(prev any) (any, error) {
			return appendImages(prev, imgs), nil
		})
	case "tgi":
		in, ok := body["inputs"].(string)
		if !ok {
			return errors.New("images: TGI's body has no inputs string to put them in")
		}
		for _, im := range imgs {
			in = "![](" + im.DataURL() + ")" + in
		}
		body["inputs"] = in
		return nil
	default:
		return fmt.Errorf("images: protocol %s takes no image input (use openai-chat, openai-responses, anthropic, "+
			"gemini, ollama or tgi)", protocol)
	}
}

// attachToTurn replaces field of the last user turn in body[list] with
// edit(field), copying the list and the turn so the caller's stay as they were.
func attachToTurn(body map[string]any, list, field string, edit func(any) (any, error)) error {
	turns, ok := body[list].([]any)
	if !ok {
		return fmt.Errorf("images: the body has no %s array to attach them to", list)
	}
	for i := len(turns) - 1; i >= 0; i-- {
		turn, ok := turns[i].(map[string]any)
		if !ok {
			continue
		}
		role, _ := turn["role"].(string)
		if role != "user" && (role != "" || list != "contents") { // a Gemini turn without a role is the user's
			continue
		}
		v, err := edit(turn[field])
		if err != nil {
			return fmt.Errorf("images: %s[%d]: %w", list, i, err)
		}
		copied := make(map[string]any, len(turn)+1)
		for k, x := range turn {
			copied[k] = x
		}
		copied[field] = v
		out := append([]any(nil), turns...)
		out[i] = copied
		body[list] = out
		return nil
	}
	return fmt.Errorf("images: %s has no user turn to attach them to", list)
}

// textParts turns a message's content into a list of parts: a string becomes
// one text part of type textType; a list is copied as it is.
func textParts(content any, textType string) ([]any, error) {
	switch c := content.(type) {
	case nil:
		return nil, nil
	case string:
		return []any{map[string]any{"type": textType, "text": c}}, nil
	case []any:
		return append([]any(nil), c...), nil
	default:
		return nil, errors.New("content is neither a string nor a list of parts")
	}
}

func appendImages(prev any, imgs []Image) []any {
	list, _ := prev.([]any)
	out := append(make([]any, 0, len(list)+len(imgs)), list...)
	for _, im := range imgs {
		out = append(out, im.Base64)
	}
	return out
}

package sim

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Request-reading helpers shared by the native (non-OpenAI) protocols: each
// names its own fields, but all decode JSON, bound a max-tokens field and pull
// the text out of "a string or a list of parts".

// decodeBody unmarshals a JSON object body into v; errors name the field.
func decodeBody(body []byte, v any) *apiError {
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("", "request body is empty: expected a JSON object")
	}
	if err := json.Unmarshal(body, v); err != nil {
		if ute, ok := err.(*json.UnmarshalTypeError); ok && ute.Field != "" { //nolint:errorlint // a direct result
			return badRequest(ute.Field, "invalid type for '"+ute.Field+"': expected "+ute.Type.String())
		}
		return badRequest("", "invalid JSON body: "+err.Error())
	}
	return nil
}

// maxTokensField validates an output-length field: nil is the model's
// default (0), otherwise 1..maxOutputTokens.
func maxTokensField(param string, v *int64) (int, *apiError) {
	if v == nil {
		return 0, nil
	}
	if *v < 1 {
		return 0, badRequest(param, param+" must be at least 1, got "+strconv.FormatInt(*v, 10))
	}
	if *v > maxOutputTokens {
		return 0, badRequest(param, param+" must be at most "+strconv.Itoa(maxOutputTokens)+" in llm-sim")
	}
	return int(*v), nil
}

// textPart is a content part; only text parts count towards the prompt.
type textPart struct {
	Type string  `json:"type"`
	Text *string `json:"text"`
}

// appendContentText appends the text of raw, which is a string or a list of
// parts ({"type": "text", "text": …} or Responses' "input_text"); null or
// absent is no text. Non-text parts (images, tool results) are skipped.
func appendContentText(sb *strings.Builder, raw json.RawMessage, param string) *apiError {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return badRequest(param, param+": "+err.Error())
		}
		sb.WriteString(s)
		return nil
	}
	var parts []textPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return badRequest(param, param+" must be a string or an array of content parts")
	}
	for _, p := range parts {
		if p.Text != nil && (p.Type == "" || p.Type == "text" || p.Type == "input_text") {
			sb.WriteString(*p.Text)
		}
	}
	return nil
}

// indexed names element i of a list parameter, e.g. messages[2].
func indexed(param string, i int) string { return param + "[" + strconv.Itoa(i) + "]" }

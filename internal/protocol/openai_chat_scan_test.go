package protocol

import (
	"reflect"
	"strings"
	"testing"
)

// chunkShapes are chat chunks as servers send them, and the quirks of the
// format: each either read by the scan or handed back to the general
// decoder (scanned says which), and decoded the same either way.
var chunkShapes = []struct { //nolint:gochecknoglobals // test table
	name, data string
	scanned    bool
}{
	{"llm-sim content", `{"id":"chatcmpl-sim-40ac017b-1","object":"chat.completion.chunk","created":1795965104,"model":"sim-fast","choices":[{"index":0,"delta":{"content":" music"},"logprobs":null,"finish_reason":null}],"usage":null}`, true},
	{"role first chunk", `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":null,"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"obfuscation":"k9"}`, true},
	{"finish chunk", `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}`, true},
	{"usage chunk", `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":4,"total_tokens":13,"prompt_tokens_details":{"cached_tokens":0}}}`, true},
	{"continuous usage", `{"id":"c","object":"chat.completion.chunk","created":1,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":" a"},"logprobs":null,"finish_reason":null,"stop_reason":null}],"usage":{"prompt_tokens":26,"total_tokens":40,"completion_tokens":14}}`, true},
	{"escapes in content", `{"choices":[{"index":0,"delta":{"content":"line\n\"q\" \u00e9 \ud83d\ude00 \/"}}]}`, true},
	{"lone surrogate", `{"choices":[{"delta":{"content":"\ud800x"}}]}`, true},
	{"reasoning both names", `{"choices":[{"index":0,"delta":{"reasoning_content":"think","reasoning":"think"}}]}`, true},
	{"reasoning new name", `{"choices":[{"index":0,"delta":{"reasoning":"r","content":null}}]}`, true},
	{"refusal", `{"choices":[{"index":0,"delta":{"refusal":"no"}}]}`, true},
	{"n=2 interleaved", `{"choices":[{"index":1,"delta":{"content":"b"}},{"index":0,"delta":{"content":"a"},"finish_reason":"length"}]}`, true},
	{"duplicate keys", `{"model":"a","model":"b","choices":[{"delta":{"content":"x"}}],"choices":[{"delta":{"content":"y","content":"z"}}]}`, true},
	{"azure filter first chunk", `{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}}}]}`, true},
	{"llama.cpp timings", `{"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"timings":{"prompt_n":5,"prompt_ms":12.5,"predicted_n":3,"predicted_ms":30.1}}`, true},
	{"whitespace", " \r\n\t{ \"choices\" : [ { \"delta\" : { \"content\" : \"w\" } } ] }\n ", true},
	{"null tool_calls beside content", `{"choices":[{"index":0,"delta":{"content":"a","tool_calls":null,"function_call":null}}]}`, true},
	{"delta null", `{"choices":[{"index":0,"delta":null,"finish_reason":"stop"}]}`, true},
	{"empty object", `{}`, true},
	{"model not a string", `{"model":7,"choices":[]}`, true},

	{"done sentinel", `[DONE]`, false},
	{"tool call", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}}]}`, false},
	{"error object", `{"error":{"message":"overloaded","type":"server_error","code":503}}`, false},
	{"flat error", `{"object":"error","message":"bad","code":400}`, false},
	{"choices null", `{"choices":null,"usage":{"prompt_tokens":1}}`, false},
	{"choice not an object", `{"choices":["x"],"usage":{"completion_tokens":1}}`, false},
	{"escaped key", `{"choices":[{"delta":{"cont\u0065nt":"x"}}]}`, false},
	{"index as text", `{"choices":[{"index":"1","delta":{"content":"x"}}]}`, false},
	{"index fraction", `{"choices":[{"index":1.0,"delta":{"content":"x"}}]}`, false},
	{"not JSON", `{"choices":[{"delta":{"content":"x"}}]`, false},
	{"trailing data", `{"choices":[]} {}`, false},
	{"control character in a string", "{\"model\":\"a\x01b\"}", false},
	{"bad escape", `{"model":"a\qb"}`, false},
	{"not an object", `"text"`, false},
	{"vertical tab around", "\v{}\v", false},
	{"deep", `{"x":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, false},
}

func TestChatChunkScanReadsWhatTheDecoderReads(t *testing.T) {
	for _, tc := range chunkShapes {
		t.Run(tc.name, func(t *testing.T) {
			var scanned Delta
			if got := scanChatChunk(tc.data, &scanned); got != tc.scanned {
				t.Fatalf("scanned = %v, want %v", got, tc.scanned)
			}
			compareWithDecoder(t, tc.data)
		})
	}
}

// compareWithDecoder decodes data with the chat decoder (the scan first)
// and with the general decoder alone, and fails on any difference; a chunk
// the scan hands back leaves the Delta untouched.
func compareWithDecoder(t *testing.T, data string) {
	t.Helper()
	var want, got, scanned Delta
	wantErr := decodeOpenAIChunk(Event{Data: data}, &want, decodeChatChoice)
	gotErr := (&openAIChat{}).Decode(Event{Data: data}, &got)
	if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
		t.Fatalf("%q: error %v, want %v", data, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %+v\nwant %+v", data, got, want)
	}
	if !scanChatChunk(data, &scanned) && !reflect.DeepEqual(scanned, Delta{}) {
		t.Fatalf("%q: the scan handed the chunk back but changed the Delta: %+v", data, scanned)
	}
}

// FuzzChatChunkScanAgreesWithDecoder holds the single-pass scan to the
// general decoder, the reference: the same Delta and the same error for any
// payload.
func FuzzChatChunkScanAgreesWithDecoder(f *testing.F) {
	for _, tc := range chunkShapes {
		f.Add(tc.data)
	}
	for _, tc := range contentEvents {
		if tc.protocol == "openai-chat" {
			f.Add(tc.ev.Data)
		}
	}
	f.Fuzz(func(t *testing.T, data string) { compareWithDecoder(t, data) })
}

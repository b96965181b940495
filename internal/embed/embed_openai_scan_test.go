package embed

import (
	"reflect"
	"strings"
	"testing"
)

// answerShapes are embeddings answers as servers send them, and the
// format's quirks: each read by the scan or handed back to the general
// parse (scanned says which), and read the same either way.
var answerShapes = []struct { //nolint:gochecknoglobals // test table
	name, body string
	scanned    bool
}{
	{"llm-sim", string(simLikeAnswer()), true},
	{"batch of two", `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,-2e-3]},{"object":"embedding","index":1,"embedding":[0,1]}],"model":"m","usage":{"prompt_tokens":3,"total_tokens":3}}`, true},
	{"base64", `{"data":[{"index":0,"embedding":"AAAAAAAAgD8="}],"model":"m","usage":{"total_tokens":2}}`, true},
	{"no index, no usage", `{"data":[{"embedding":[1,2,3]}]}`, true},
	{"usage as text", `{"data":[{"embedding":[1]}],"usage":{"prompt_tokens":"7"}}`, true},
	{"negative usage", `{"data":[{"embedding":[1]}],"usage":{"prompt_tokens":-4,"total_tokens":5}}`, true},
	{"duplicate keys keep the first", `{"data":[{"index":0,"index":"x","embedding":[1],"embedding":"bad"}],"model":"a","model":"b","usage":{"prompt_tokens":1},"usage":{"prompt_tokens":2},"data":null}`, true},
	{"model escaped", `{"data":[],"model":"BAAI\/bge-m3"}`, true},
	{"model not a string", `{"data":[],"model":null}`, true},
	{"index not a number", `{"data":[{"index":"0","embedding":[1]}]}`, true},
	{"empty vector", `{"data":[{"embedding":[]}]}`, true},
	{"whitespace", " \n{ \"data\" : [ { \"embedding\" : [ 1 , 2 ] } ] }\n", true},

	{"error answer", `{"error":{"message":"bad input"}}`, false},
	{"data not an array", `{"data":{"embedding":[1]}}`, false},
	{"dimensions differ", `{"data":[{"embedding":[1,2]},{"embedding":[1]}]}`, false},
	{"not a number in a vector", `{"data":[{"embedding":[1,"2"]}]}`, false},
	{"index out of range", `{"data":[{"index":-2,"embedding":[1]}]}`, false},
	{"index fraction", `{"data":[{"index":0.0,"embedding":[1]}]}`, false},
	{"base64 unpadded", `{"data":[{"embedding":"AAAAAA"}]}`, false},
	{"base64 escaped", `{"data":[{"embedding":"AAAA\u0041AAA"}]}`, false},
	{"escaped key", `{"d\u0061ta":[{"embedding":[1]}]}`, false},
	{"no embedding", `{"data":[{"index":0}]}`, false},
	{"invalid JSON", `{"data":[{"embedding":[1,]}]}`, false},
	{"trailing data", `{"data":[]}x`, false},
	{"deep", `{"data":[],"x":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, false},
	{"empty", ``, false},
}

func TestOpenAIScanReadsWhatTheGeneralParseReads(t *testing.T) {
	for _, tc := range answerShapes {
		t.Run(tc.name, func(t *testing.T) {
			if _, got := scanOpenAI([]byte(tc.body)); got != tc.scanned {
				t.Fatalf("scanned = %v, want %v", got, tc.scanned)
			}
			compareWithGeneral(t, []byte(tc.body))
		})
	}
}

// compareWithGeneral reads body unkept with parseOpenAI (the scan first)
// and with the general parse alone, and fails on any difference.
func compareWithGeneral(t *testing.T, body []byte) {
	t.Helper()
	want, wantErr := parseOpenAIGeneral(body, false)
	got, gotErr := parseOpenAI(body, false)
	if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
		t.Fatalf("%q: error %v, want %v", body, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %+v\nwant %+v", body, got, want)
	}
}

// FuzzOpenAIScanAgreesWithGeneral holds the single-pass scan to the
// general parse, the reference: the same answer and the same error for
// any body.
func FuzzOpenAIScanAgreesWithGeneral(f *testing.F) {
	for _, tc := range answerShapes {
		f.Add([]byte(tc.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) { compareWithGeneral(t, body) })
}

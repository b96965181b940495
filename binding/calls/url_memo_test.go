package calls

import "testing"

// A client's calls get k6's URL of their own URL and name: the kept one
// only while both are the last call's, a bad URL's error only for it.
func TestK6URLFollowsEachCall(t *testing.T) {
	c := &Client{}
	for _, tc := range []struct{ raw, name, wantURL, wantName string }{
		{"http://a:1/v1/chat", "a", "http://a:1/v1/chat", "a"},
		{"http://a:1/v1/chat", "a", "http://a:1/v1/chat", "a"},
		{"http://b:2/v1/chat", "a", "http://b:2/v1/chat", "a"},
		{"http://b:2/v1/chat", "b", "http://b:2/v1/chat", "b"},
		{"http://u:secret@b:2/x", "http://u:secret@b:2/x", "http://u:secret@b:2/x", "http://****:****@b:2/x"},
		{"http://b:2/%zz", "b", "", ""},
		{"http://b:2/v1/chat", "b", "http://b:2/v1/chat", "b"},
	} {
		u, err := c.k6URL(tc.raw, tc.name)
		if tc.wantURL == "" {
			if err == nil {
				t.Errorf("%q: no error", tc.raw)
			}
			continue
		}
		if err != nil || u.URL != tc.wantURL || u.Name != tc.wantName {
			t.Errorf("%q %q: got %q %q %v, want %q %q", tc.raw, tc.name, u.URL, u.Name, err, tc.wantURL, tc.wantName)
		}
	}
}

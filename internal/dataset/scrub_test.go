package dataset

import (
	"strings"
	"testing"
)

func TestScrubMasksTrickyValues(t *testing.T) {
	cases := []struct{ in, kind string }{
		{"write to jane.doe+invoices@mail.example.co.uk today", ScrubEmail},
		{"contact: J_Smith@Example.COM.", ScrubEmail},
		{"<bob@corp.io>", ScrubEmail},
		{"card 4111 1111 1111 1111 expires", ScrubCard},
		{"card 4111-1111-1111-1111", ScrubCard},
		{"amex 378282246310005", ScrubCard},
		{"pay with 5555555555554444.", ScrubCard},
		{"call +44 20 7946 0958 now", ScrubPhone},
		{"call +1-202-555-0143", ScrubPhone},
		{"phone (202) 555-0143", ScrubPhone},
		{"phone 202.555.0143", ScrubPhone},
		{"手机 13800138000 联系", ScrubPhone},
		{"+86 138 0013 8000", ScrubPhone},
		{"key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789", ScrubKey},
		{"ANTHROPIC sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz012345", ScrubKey},
		{"AKIAIOSFODNN7EXAMPLE is the id", ScrubKey},
		{"token ghp_abcdefghijklmnopqrstuvwxyzABCDEF123456", ScrubKey},
		{"xoxb-1234567890-abcdefghij", ScrubKey},
		{"AIzaSyA1234567890abcdefghijklmnopqrstuv", ScrubKey},
		{"Authorization: Bearer abc123def456ghi789jkl", ScrubKey},
		{`"api_key": "9f8e7d6c5b4a39281706"`, ScrubKey},
		{"password=hunter2hunter2", ScrubKey},
		{"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", ScrubKey},
		{"id Zx9Qm2Lp8Rt4Vw6Yb1Nc3Kd5Hf7Jg0Ts", ScrubKey},
	}
	for _, c := range cases {
		out, counts := Scrub(c.in)
		if counts[c.kind] != 1 || !strings.Contains(out, mask(c.kind)) {
			t.Errorf("%q → %q, counts %v; want one %s", c.in, out, counts, c.kind)
		}
		total := 0
		for _, n := range counts {
			total += n
		}
		if total != 1 {
			t.Errorf("%q masked %d values (%v), want 1", c.in, total, counts)
		}
	}
}

func TestScrubLeavesLookAlikes(t *testing.T) {
	lookAlikes := []string{
		"order 4111111111111112 failed the check digit",            // not Luhn
		"meet on 2024-01-15 at 12:30:45",                           // date, time
		"server 192.168.100.200 and 10.0.0.1",                      // IP addresses
		"version 10.0.19045.3693",                                  // build number
		"commit 3f9a2c71b8e4d5f60718293a4b5c6d7e8f901234",          // git hash, one case
		"uuid 123e4567-e89b-12d3-a456-426614174000",                // UUID
		"user@localhost and @mention",                              // no domain
		"total 1,234,567.89 USD in 2023",                           // amounts
		"ISBN 978-3-16-148410-0",                                   // ISBN
		"the password is in the vault",                             // prose
		"internationalization_and_localization_considerations_doc", // long word
		"call extension 4412",                                      // short number
		"account 12345678",                                         // 8 digits
	}
	for _, s := range lookAlikes {
		if out, counts := Scrub(s); out != s {
			t.Errorf("%q changed to %q (%v)", s, out, counts)
		}
	}
}

func TestScrubCountsMany(t *testing.T) {
	in := "a@b.com, c@d.org; 4111 1111 1111 1111 and +44 20 7946 0958, sk-abcdefghijklmnopqrstu12345"
	out, counts := Scrub(in)
	want := map[string]int{ScrubEmail: 2, ScrubCard: 1, ScrubPhone: 1, ScrubKey: 1}
	for k, v := range want {
		if counts[k] != v {
			t.Errorf("%s: %d, want %d (%q)", k, counts[k], v, out)
		}
	}
}

func TestLuhn(t *testing.T) {
	for s, want := range map[string]bool{"4111111111111111": true, "4111111111111112": false,
		"79927398713": false /* valid Luhn but too short for a card */, "6011000990139424": true} {
		if luhnDigits(s) != want {
			t.Errorf("luhn(%s) = %v", s, !want)
		}
	}
}

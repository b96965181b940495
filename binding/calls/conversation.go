package calls

// client.conversation(options): a live conversation, the JS surface of
// internal/conversation. Its options are read here; conversation_turn.go
// sends its turns (each a chat call through the same plan, attempt and
// fan-out as client.chat) and conversation_job.go records its job figures.
// A conversation lives in one VU, so it stays on one k6 instance.

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/grafana/sobek"

	"github.com/llmstream/xk6-llmstream/binding/k6env"
	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/conversation"
	"github.com/llmstream/xk6-llmstream/internal/record"
)

// conversationOptions is client.conversation's argument.
type conversationOptions struct {
	System         string          `opt:"system"`
	Body           map[string]any  `opt:"body"`
	Params         map[string]any  `opt:"params"`
	Think          any             `opt:"think" want:"a duration ('3s', or ms) or {dist, median, min, max, sigma}"`
	Pace           *paceOptions    `opt:"pace"`
	Session        *sessionOptions `opt:"session"`
	History        historyOptions  `opt:"history"`
	Reasoning      string          `opt:"reasoning"`
	ReasoningField string          `opt:"reasoningField"`
	Category       string          `opt:"category"`
}

type thinkOptions struct {
	Dist   string        `opt:"dist"`
	Median time.Duration `opt:"median"`
	Min    time.Duration `opt:"min"`
	Max    time.Duration `opt:"max"`
	Sigma  float64       `opt:"sigma"`
}

type paceOptions struct {
	Users int     `opt:"users"`
	Rate  float64 `opt:"rate"`
}

type sessionOptions struct {
	Header       any    `opt:"header" want:"a header name or a list of them"`
	Body         string `opt:"body"`
	Cookie       string `opt:"cookie"`
	Key          string `opt:"key"`
	RouterHeader string `opt:"routerHeader"`
}

type historyOptions struct {
	MaxTurns  int  `opt:"maxTurns"`
	MaxTokens int  `opt:"maxTokens"`
	Chain     bool `opt:"chain"`
}

// historyFields are the body fields a conversation's history fills: a base
// body that sets one would be overwritten on every turn.
var historyFields = []string{"messages", "contents", "input", "prompt", "previous_response_id"} //nolint:gochecknoglobals // read-only table

// Conversation is the JS conversation: its history as the server answered,
// its session, its pauses and its job. Its methods run on the VU's event
// loop; only a turn's call runs off it.
type Conversation struct {
	// SessionKey is the key its session sends ("" without a session).
	SessionKey string `js:"session"`

	c        *Client
	kind     string // record.JobConversation, or JobAgent for an agent's
	hist     *conversation.History
	sess     *conversation.Session // nil without a session
	think    *conversation.Think   // nil: no pause between turns
	pace     *conversation.Pace    // user-centric timing instead of think
	body     map[string]any        // base body fields of every turn
	params   map[string]any        // chat params of every turn
	onEvent  sobek.Value           // the params' onEvent, kept as a function
	category string
	rng      *rand.Rand

	job       *record.Job // nil until a turn has been answered
	turns     int
	busy      bool   // a turn is in flight
	over      bool   // a turn failed or the test stopped: say() resolves null
	ended     bool   // end() was called
	recorded  bool   // the job's samples went out
	endReason string // why it is over by itself
}

// Conversation is client.conversation(options).
func (c *Client) Conversation(opts sobek.Value) (*Conversation, error) {
	if c.env.VU.State() == nil {
		// One made in init would be every iteration's: its history would grow for the whole test.
		return nil, errors.New("conversation() must be called in the VU context (the default function): one conversation per iteration")
	}
	return c.newConversation(opts)
}

// newConversation reads the options and makes the conversation; an agent
// calls it in init too, to check its options before the test starts.
func (c *Client) newConversation(opts sobek.Value) (*Conversation, error) {
	var o conversationOptions
	if err := k6env.DecodeOptions(opts, "conversation options", &o); err != nil {
		return nil, err
	}
	if c.fallback != nil && c.fallback.opts.Protocol.Name != c.opts.Protocol.Name {
		return nil, fmt.Errorf("conversation: the client's fallback speaks %s, not %s: one history cannot be both",
			c.fallback.opts.Protocol.Name, c.opts.Protocol.Name)
	}
	for _, f := range historyFields {
		if _, ok := o.Body[f]; ok {
			return nil, fmt.Errorf("conversation options: body.%s is the conversation's history: give the system prompt as system and each turn to say()", f)
		}
	}
	hist, err := conversation.New(conversation.Options{
		Protocol: c.opts.Protocol.Name, System: o.System, Reasoning: o.Reasoning, ReasoningField: o.ReasoningField,
		MaxTurns: o.History.MaxTurns, MaxTokens: o.History.MaxTokens, Count: c.count, Chain: o.History.Chain,
	})
	if err != nil {
		return nil, err //nolint:wrapcheck // names the option
	}
	cv := &Conversation{c: c, kind: record.JobConversation, hist: hist, body: o.Body, category: o.Category,
		rng: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))} // #nosec G404 -- think times, not secrets
	if err := cv.readParams(opts, o.Params); err != nil {
		return nil, err
	}
	if cv.think, err = readThink(o.Think); err != nil {
		return nil, err
	}
	if o.Pace != nil {
		if cv.think != nil {
			return nil, errors.New("conversation options: think and pace are two ways to time turns: give one")
		}
		p := conversation.Pace{Users: o.Pace.Users, Rate: o.Pace.Rate}
		if err := p.Check(); err != nil {
			return nil, fmt.Errorf("conversation options: %w", err)
		}
		cv.pace = &p
	}
	if cv.sess, err = readSession(o.Session); err != nil {
		return nil, err
	}
	if cv.sess != nil {
		cv.SessionKey = cv.sess.Key
	}
	return cv, nil
}

// readParams keeps the chat params of every turn, checked now so a typo
// fails at once, with onEvent kept as the JS function it is.
func (cv *Conversation) readParams(opts sobek.Value, params map[string]any) error {
	if params == nil {
		return nil
	}
	if _, ok := params["item"]; ok {
		return errors.New("conversation options: params.item: an item is one turn's, pass it to say(item)")
	}
	if _, ok := params["onEvent"]; ok {
		cv.onEvent = opts.ToObject(cv.c.env.VU.Runtime()).Get("params").ToObject(cv.c.env.VU.Runtime()).Get("onEvent")
		if _, fn := sobek.AssertFunction(cv.onEvent); !fn {
			return errors.New("conversation options: params.onEvent must be a function")
		}
		delete(params, "onEvent")
	}
	if _, err := config.ParseCall(params, cv.c.opts); err != nil {
		return fmt.Errorf("conversation options: params: %w", err)
	}
	cv.params = params
	return nil
}

// readThink reads think: a duration is a fixed pause.
func readThink(v any) (*conversation.Think, error) {
	if v == nil {
		return nil, nil //nolint:nilnil // no pause
	}
	var t conversation.Think
	if m, ok := v.(map[string]any); ok {
		var o thinkOptions
		if err := config.Decode("conversation options: think", m, &o); err != nil {
			return nil, err //nolint:wrapcheck // names the option
		}
		t = conversation.Think{Dist: o.Dist, Median: o.Median, Min: o.Min, Max: o.Max, Sigma: o.Sigma}
	} else {
		d, err := config.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("conversation options: think: %w", err)
		}
		t = conversation.Think{Median: d}
	}
	if t.Min < 0 || t.Median < 0 {
		return nil, errors.New("conversation options: think: a pause cannot be negative")
	}
	if err := t.Check(); err != nil {
		return nil, fmt.Errorf("conversation options: %w", err)
	}
	return &t, nil
}

// readSession reads session: the key (a fresh one per conversation unless
// given) and where it goes.
func readSession(o *sessionOptions) (*conversation.Session, error) {
	if o == nil {
		return nil, nil //nolint:nilnil // no session
	}
	s := &conversation.Session{Key: o.Key, BodyField: o.Body, Cookie: o.Cookie, RouteHeader: o.RouterHeader}
	switch h := o.Header.(type) {
	case nil:
	case string:
		s.Headers = []string{h}
	case []any:
		for _, v := range h {
			name, ok := v.(string)
			if !ok || name == "" {
				return nil, fmt.Errorf("conversation options: session.header: each entry must be a header name, got %v", v)
			}
			s.Headers = append(s.Headers, name)
		}
	default:
		return nil, fmt.Errorf("conversation options: session.header must be a header name or a list of them, got %v", h)
	}
	if len(s.Headers) == 0 && s.BodyField == "" && s.Cookie == "" && s.RouteHeader == "" {
		return nil, errors.New("conversation options: session needs header, body, cookie or routerHeader: where the key goes")
	}
	if s.Key == "" {
		s.Key = newKey()
	}
	return s, nil
}

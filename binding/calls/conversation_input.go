package calls

// A conversation's turn as the script gives it: say()'s arguments read (the
// user's text or a dataset item, and this turn's params), and the turn's
// body and chat params made from them and the conversation's options.
// conversation_turn.go sends it.

import (
	"errors"
	"fmt"
	"maps"
	"net/http"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"

	"github.com/llmstream/xk6-llmstream/binding/k6env"
	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/conversation"
)

// turnInput is one turn as the script gave it.
type turnInput struct {
	user      string
	continued bool           // no user message: the model goes on after tool results (an agent's step)
	item      map[string]any // the dataset item the turn came from (nil: script text)
	body      map[string]any // this turn's body fields
	params    map[string]any // this turn's chat params
	onEvent   sobek.Value
}

// readTurn reads say()'s arguments: the user's text or a dataset item, and
// this turn's params (chat's, with body for this turn's body fields).
func (cv *Conversation) readTurn(input, paramsV sobek.Value) (*turnInput, error) {
	in := &turnInput{}
	switch v := exportOrNil(input).(type) {
	case string:
		in.user = v
	case map[string]any:
		text, err := conversation.ItemUserText(v)
		if err != nil {
			return nil, err
		}
		in.user, in.item = text, v
	default:
		return nil, fmt.Errorf("conversation: say(turn): turn must be the user's text or a dataset item, got %s", k6env.DescribeJS(input))
	}
	po, err := k6env.ExportObject(paramsV, "say params")
	if err != nil {
		return nil, err
	}
	if po != nil {
		if b, ok := po["body"]; ok {
			if in.body, ok = b.(map[string]any); !ok {
				return nil, errors.New("say params: body must be an object (this turn's body fields)")
			}
			delete(po, "body")
		}
		if _, ok := po["item"]; ok {
			return nil, errors.New("say params: item: pass the item itself, say(item)")
		}
		if _, ok := po["onEvent"]; ok {
			in.onEvent = paramsV.ToObject(cv.c.env.VU.Runtime()).Get("onEvent")
			delete(po, "onEvent")
		}
	}
	if _, err := config.ParseCall(po, cv.c.opts); err != nil { // a typo fails here, not turns later
		return nil, fmt.Errorf("say params: %w", err)
	}
	in.params = po
	for _, f := range historyFields {
		if _, ok := in.body[f]; ok {
			return nil, fmt.Errorf("say params: body.%s is the conversation's history", f)
		}
	}
	in.body = cv.turnBody(in)
	return in, nil
}

func exportOrNil(v sobek.Value) any {
	if common.IsNullish(v) {
		return nil
	}
	return v.Export()
}

// turnBody is the turn's base body: the conversation's fields, this turn's
// over them, and the item's answer length where the protocol reads it.
func (cv *Conversation) turnBody(in *turnInput) map[string]any {
	body := make(map[string]any, len(cv.body)+len(in.body)+1)
	maps.Copy(body, cv.body)
	maps.Copy(body, in.body)
	n, _ := in.item["maxTokens"].(int64)
	cv.c.opts.Protocol.SetMaxTokens(body, n) // unless the body asks for a length already
	return body
}

// turnParams are the turn's chat params as a JS object: the conversation's
// and this turn's (conversation.TurnParams), the item, and the turn's
// onEvent, else the conversation's.
func (cv *Conversation) turnParams(rt *sobek.Runtime, in *turnInput, session http.Header) sobek.Value {
	merged := conversation.TurnParams(cv.params, in.params, session, cv.turns, cv.category)
	if in.item != nil {
		merged["item"] = in.item
	}
	obj := rt.NewObject()
	for k, v := range merged {
		_ = obj.Set(k, v)
	}
	onEvent := in.onEvent
	if onEvent == nil {
		onEvent = cv.onEvent
	}
	if onEvent != nil {
		_ = obj.Set("onEvent", onEvent)
	}
	return obj
}

package stream

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"
)

// ErrorType classifies why a call failed. The values are part of the public
// contract: they become the error_type tag and result.error.type.
type ErrorType string

// The error classes (docs/metrics.md lists them for users).
const (
	ErrTimeoutConnect    ErrorType = "timeout_connect"
	ErrTimeoutFirstToken ErrorType = "timeout_first_token"
	ErrTimeoutIdle       ErrorType = "timeout_idle"
	ErrTimeoutTotal      ErrorType = "timeout_total"
	ErrHTTP429           ErrorType = "http_429"
	ErrHTTP4xx           ErrorType = "http_4xx"
	ErrHTTP5xx           ErrorType = "http_5xx"
	ErrNetwork           ErrorType = "network"
	ErrStream            ErrorType = "stream_error"
	ErrDecode            ErrorType = "decode"
	ErrTruncated         ErrorType = "truncated"
	ErrCanceled          ErrorType = "canceled"
	// ErrDropped is no call's error: a schedule's credit that was due but
	// never sent before the test stopped, counted as a failed call. Not in
	// AllErrorTypes, as there is nothing to retry.
	ErrDropped ErrorType = "dropped"
)

// AllErrorTypes lists every class, for documentation and validation of retry.on.
var AllErrorTypes = []ErrorType{ //nolint:gochecknoglobals // read-only table
	ErrTimeoutConnect, ErrTimeoutFirstToken, ErrTimeoutIdle, ErrTimeoutTotal,
	ErrHTTP429, ErrHTTP4xx, ErrHTTP5xx, ErrNetwork, ErrStream, ErrDecode, ErrTruncated, ErrCanceled,
}

// Error is a classified failure.
type Error struct {
	Type    ErrorType
	Message string
}

func (e *Error) Error() string { return string(e.Type) + ": " + e.Message }

// timeoutCause is the cancellation cause a watchdog uses; Classify maps it back.
type timeoutCause struct{ t ErrorType }

func (c timeoutCause) Error() string { return string(c.t) }

// CauseFor returns the context cancellation cause that classifies as t.
func CauseFor(t ErrorType) error { return timeoutCause{t} }

// Classify maps a transport or read error to its class. cause is
// context.Cause of the call's context, or the caller's context's error when
// that one ended (nil when both are live).
func Classify(err, cause error) ErrorType {
	var tc timeoutCause
	if errors.As(cause, &tc) {
		return tc.t
	}
	if errors.As(err, &tc) {
		return tc.t
	}
	// The call's own timeouts carry a timeoutCause; a plain cancellation or
	// deadline is the caller's context ending: the test's stop (k6 ends a
	// scenario's VUs at their graceful stop with a deadline), not a timeout
	// of the call.
	if cause != nil && (errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded)) {
		return ErrCanceled
	}
	if errors.Is(err, context.DeadlineExceeded) || isTimeoutText(err) {
		return ErrTimeoutTotal
	}
	if errors.Is(err, context.Canceled) {
		return ErrCanceled
	}
	return ErrNetwork
}

func isTimeoutText(err error) bool {
	if err == nil {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	// k6 wraps a request timeout in its own error type, losing the chain.
	return strings.Contains(err.Error(), "request timeout")
}

// IsTLS reports whether err comes from certificate verification or the TLS handshake.
func IsTLS(err error) bool {
	var (
		ue  x509.UnknownAuthorityError
		he  x509.HostnameError
		cie x509.CertificateInvalidError
		ve  *tls.CertificateVerificationError
		re  tls.RecordHeaderError
	)
	return errors.As(err, &ue) || errors.As(err, &he) || errors.As(err, &cie) ||
		errors.As(err, &ve) || errors.As(err, &re)
}

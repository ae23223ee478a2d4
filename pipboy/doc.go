// Package pipboy implements the Fallout 4 Pip-Boy companion protocol described in
// the Pip-Boy PROTOCOL.md: UDP discovery, the TCP message stream (types 0-6), the value
// database the game streams to the app, the local map, and commands.
//
// On top of the codec it provides the four roles of the protocol: an app [Client],
// a game emulator ([Server]), a [Relay] that records a session between a real app and a
// real game, and [Replay], which serves such a recording again with its original timing.
// The web dashboard lives in the subpackage pipboy/dashboard.
//
// Decoders never allocate from a size they have not checked against the input or a
// configured limit ([DefaultMaxMessageSize] for message frames), and every decoding error
// wraps one of the sentinel errors below with the field and offset at fault, so callers
// can test them with errors.Is.
package pipboy

import "errors"

// Sentinel errors. Functions wrap them with context (message type, field, offset).
var (
	// ErrTruncated means the input ended inside a message, value, map frame or field.
	ErrTruncated = errors.New("truncated")
	// ErrTooLarge means a message size field exceeds the configured limit.
	ErrTooLarge = errors.New("message size above limit")
	// ErrUnknownMessageType means a message type outside 0-6.
	ErrUnknownMessageType = errors.New("unknown message type")
	// ErrUnknownValueType means a database value type outside 0-8.
	ErrUnknownValueType = errors.New("unknown value type")
	// ErrUnknownID means an update refers to a value id that was never sent.
	ErrUnknownID = errors.New("reference to unknown value id")
	// ErrBadJSON means the JSON content of a type 1, 5 or 6 message (or a discovery
	// datagram) is malformed or lacks a required field.
	ErrBadJSON = errors.New("malformed JSON")
	// ErrBadMap means a local map frame whose pixel data does not fit its declared size.
	ErrBadMap = errors.New("malformed local map frame")
	// ErrBusy means the game answered with message type 2: another app is connected.
	ErrBusy = errors.New("game is busy (another app is connected)")
	// ErrNotFound means a path or id names no value in the database.
	ErrNotFound = errors.New("no such value")
	// ErrBadPath means a path expression that cannot be parsed.
	ErrBadPath = errors.New("malformed path")
	// ErrBadRecording means a recording file that does not follow the format in docs/pipboy.md.
	ErrBadRecording = errors.New("malformed recording")
	// ErrRecordingFull is returned by Recorder.Record once a record would take the
	// recording past Recorder.MaxBytes: the file ends on the last whole record.
	ErrRecordingFull = errors.New("pipboy: recording size limit reached")
	// ErrServerClosed is returned by Serve after Shutdown or Close (Server, Relay and
	// Responder alike).
	ErrServerClosed = errors.New("pipboy: server closed")
)

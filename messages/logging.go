package messages

import (
	"encoding/json/jsontext"
)

// LoggingLevel is the severity of a log message, as RFC 5424 names it.
type LoggingLevel string

// The logging levels, least severe first.
const (
	LevelDebug     LoggingLevel = "debug"
	LevelInfo      LoggingLevel = "info"
	LevelNotice    LoggingLevel = "notice"
	LevelWarning   LoggingLevel = "warning"
	LevelError     LoggingLevel = "error"
	LevelCritical  LoggingLevel = "critical"
	LevelAlert     LoggingLevel = "alert"
	LevelEmergency LoggingLevel = "emergency"
)

// Rank orders the levels from debug (0) to emergency (7); it is -1 for an
// unknown level.
func (l LoggingLevel) Rank() int {
	switch l {
	case LevelDebug:
		return 0
	case LevelInfo:
		return 1
	case LevelNotice:
		return 2
	case LevelWarning:
		return 3
	case LevelError:
		return 4
	case LevelCritical:
		return 5
	case LevelAlert:
		return 6
	case LevelEmergency:
		return 7
	}
	return -1
}

// Valid reports whether l is one of the eight levels.
func (l LoggingLevel) Valid() bool { return l.Rank() >= 0 }

// SetLevelParams are the params of logging/setLevel.
type SetLevelParams struct {
	// Level is the least severe level the client wants to receive.
	Level LoggingLevel `json:"level"`
	Meta  Meta         `json:"_meta,omitempty"`
}

// LoggingMessageParams are the params of notifications/message.
type LoggingMessageParams struct {
	Level LoggingLevel `json:"level"`
	// Logger names the source of the message.
	Logger string `json:"logger,omitempty"`
	// Data is any JSON value; nil marshals as null.
	Data jsontext.Value `json:"data"`
	Meta Meta           `json:"_meta,omitempty"`
}

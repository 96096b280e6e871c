package main

import (
	"io"
	"log/slog"
)

// logFlags choose how the server's own log is written. It goes to stderr
// only: on stdio, stdout belongs to the protocol.
type logFlags struct {
	LogLevel  string `enum:"debug,info,warn,error" default:"info" env:"MCP_ACTORS_LOG_LEVEL" help:"Least severe level logged: ${enum}."`
	LogFormat string `enum:"text,json" default:"text" env:"MCP_ACTORS_LOG_FORMAT" help:"Log format: ${enum}."`
}

// logger returns a logger writing to w as the flags say. It also becomes
// slog's default, so stray log output lands on w as well.
func (f *logFlags) logger(w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.LogLevel)); err != nil {
		level = slog.LevelInfo // unreachable: kong checked the enum
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if f.LogFormat == "json" {
		opts.ReplaceAttr = durationsAsStrings
		h = slog.NewJSONHandler(w, opts)
	}
	log := slog.New(h)
	slog.SetDefault(log)
	return log
}

// durationsAsStrings writes durations as Go writes them ("1.5ms") rather
// than as nanoseconds, which JSON logs would otherwise hold.
func durationsAsStrings(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(a.Value.Duration().String())
	}
	return a
}

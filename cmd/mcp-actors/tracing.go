package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// tracerProvider returns the trace provider the standard OTEL_* variables
// configure for this node, or nil when they leave tracing off, the
// default: tracing is on when OTEL_TRACES_EXPORTER is otlp, or when it is
// unset and an OTLP endpoint is (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT). Spans go over OTLP/HTTP (protobuf),
// batched; the exporter reads the rest of OTEL_EXPORTER_OTLP_* (headers,
// TLS, timeout, compression), the SDK OTEL_TRACES_SAMPLER and OTEL_BSP_*,
// and the resource OTEL_SERVICE_NAME (default mcp-actors) and
// OTEL_RESOURCE_ATTRIBUTES.
func tracerProvider(ctx context.Context, node string) (*sdktrace.TracerProvider, error) {
	exporter := os.Getenv("OTEL_TRACES_EXPORTER")
	endpoint := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") + os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	switch {
	case exporter == "none", exporter == "" && endpoint == "":
		return nil, nil
	case exporter != "" && exporter != "otlp":
		return nil, configError{fmt.Errorf("OTEL_TRACES_EXPORTER=%q: this build exports traces over otlp only (or none)", exporter)}
	}
	proto := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if proto != "" && proto != "http/protobuf" {
		return nil, configError{fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: this build exports traces over http/protobuf only", proto)}
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("the OTLP trace exporter: %w", err)
	}
	attrs := []attribute.KeyValue{attribute.String("service.instance.id", node), attribute.String("service.version", release())}
	if os.Getenv("OTEL_SERVICE_NAME") == "" {
		attrs = append(attrs, attribute.String("service.name", "mcp-actors"))
	}
	res, err := resource.New(ctx, resource.WithTelemetrySDK(), resource.WithAttributes(attrs...), resource.WithFromEnv())
	if err != nil {
		return nil, configError{fmt.Errorf("the trace resource (OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME): %w", err)}
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

// flushSpans sends the spans tp still holds, waiting at most 5 s; tp may be
// nil (no tracing).
func flushSpans(log *slog.Logger, tp *sdktrace.TracerProvider) {
	if tp == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		log.Warn("sending the last spans failed", "err", err)
	}
}

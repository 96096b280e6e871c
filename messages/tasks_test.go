package messages_test

import (
	"encoding/json/jsontext"
	json "encoding/json/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcp-actors/mcp-actors/messages"
)

func TestTaskTTL(t *testing.T) {
	tests := []struct {
		name string
		task *messages.Task
		wire string
	}{
		{
			name: "nil ttl is written as null",
			task: &messages.Task{TaskID: "t1", Status: messages.TaskWorking, CreatedAt: "2025-11-25T10:30:00Z", LastUpdatedAt: "2025-11-25T10:30:00Z"},
			wire: `{"taskId":"t1","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":null}`,
		},
		{
			name: "ttl and poll interval",
			task: &messages.Task{TaskID: "t1", Status: messages.TaskCompleted, StatusMessage: "done", CreatedAt: "a", LastUpdatedAt: "b",
				TTL: ptr[int64](60000), PollInterval: ptr[int64](5000)},
			wire: `{"taskId":"t1","status":"completed","statusMessage":"done","createdAt":"a","lastUpdatedAt":"b","ttl":60000,"pollInterval":5000}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.task)
			require.NoError(t, err)
			assert.JSONEq(t, tt.wire, string(b))

			var got messages.Task
			require.NoError(t, json.Unmarshal(b, &got))
			assert.Equal(t, tt.task, &got)
		})
	}
}

func TestTaskResultsInlineTheTask(t *testing.T) {
	task := messages.Task{TaskID: "t1", Status: messages.TaskCancelled, CreatedAt: "a", LastUpdatedAt: "b"}
	meta := messages.Meta{"k": jsontext.Value(`1`)}
	want := `{"taskId":"t1","status":"cancelled","createdAt":"a","lastUpdatedAt":"b","ttl":null,"_meta":{"k":1}}`
	for name, v := range map[string]any{
		"get":    &messages.GetTaskResult{Task: task, Meta: meta},
		"cancel": &messages.CancelTaskResult{Task: task, Meta: meta},
		"status": &messages.TaskStatusParams{Task: task, Meta: meta},
	} {
		t.Run(name, func(t *testing.T) {
			b, err := json.Marshal(v)
			require.NoError(t, err)
			assert.JSONEq(t, want, string(b))
		})
	}

	var got messages.GetTaskResult
	require.NoError(t, json.Unmarshal([]byte(want), &got))
	assert.Equal(t, messages.GetTaskResult{Task: task, Meta: meta}, got)
}

func TestTaskLists(t *testing.T) {
	b, err := json.Marshal(&messages.ListTasksResult{})
	require.NoError(t, err)
	assert.JSONEq(t, `{"tasks":[]}`, string(b))

	b, err = json.Marshal(&messages.CreateTaskResult{Task: &messages.Task{TaskID: "x", Status: messages.TaskWorking}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"task":{"taskId":"x","status":"working","createdAt":"","lastUpdatedAt":"","ttl":null}}`, string(b))
}

func TestTaskStatusTerminal(t *testing.T) {
	assert.False(t, messages.TaskWorking.Terminal())
	assert.False(t, messages.TaskInputRequired.Terminal())
	assert.True(t, messages.TaskCompleted.Terminal())
	assert.True(t, messages.TaskFailed.Terminal())
	assert.True(t, messages.TaskCancelled.Terminal())
}

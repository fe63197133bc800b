package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Enroll asks the taikai server at base (http://host:8080) for credentials
// of the worker's own under name, with the join token, and returns the
// secret. It asks again while the server does not answer (a worker may
// start before the server), until ctx ends; a refusal is final.
func Enroll(ctx context.Context, base, join, name string, log *slog.Logger) (string, error) {
	body, _ := json.Marshal(map[string]string{"name": name})
	url := strings.TrimSuffix(base, "/") + "/api/workers/enroll"
	client := &http.Client{Timeout: 30 * time.Second}
	for warned := false; ; {
		secret, retry, err := enrollOnce(ctx, client, url, join, body)
		if err == nil || !retry {
			return secret, err
		}
		if !warned {
			log.Warn("enrollment: the server does not answer yet; asking again", "url", url, "err", err)
			warned = true
		}
		if sleep(ctx, time.Second); ctx.Err() != nil {
			return "", fmt.Errorf("enroll at %s: %w (last: %v)", url, ctx.Err(), err)
		}
	}
}

// enrollOnce asks once; retry says whether asking again may help.
func enrollOnce(ctx context.Context, client *http.Client, url, join string, body []byte) (secret string, retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(body))
	if err != nil {
		return "", false, fmt.Errorf("enroll: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+join)
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return "", true, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	if err != nil {
		return "", true, err
	}
	var answer struct {
		Secret string `json:"secret"`
		Error  struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	json.Unmarshal(data, &answer)
	switch {
	case res.StatusCode == http.StatusCreated && answer.Secret != "":
		return answer.Secret, false, nil
	case res.StatusCode >= 500 || res.StatusCode == http.StatusTooManyRequests:
		return "", true, fmt.Errorf("%s: %s", res.Status, answer.Error.Message)
	default:
		msg := answer.Error.Message
		if msg == "" {
			msg = strings.TrimSpace(string(data))
		}
		return "", false, errors.New("enroll at " + url + ": " + res.Status + ": " + msg)
	}
}

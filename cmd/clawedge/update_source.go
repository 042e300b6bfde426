package main

import (
	"context"
	"io"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/localmodel/modelfiles"
)

// configUpdateKey is the config's update.key, "" without one. The config is
// loaded without the secret store: a key is public, and an update must go
// on when the store's passphrase is not at hand. A config that does not
// load adds no key (the image's key and --key still count).
func configUpdateKey(g *globalFlags) string {
	c, err := loadConfigFile(g, config.Load)
	if err != nil || c.Update == nil {
		return ""
	}
	return c.Update.Key
}

// openURL GETs a bundle with the client model downloads use (proxies from
// the environment, bounded connection set-up, a stall timeout, redirects).
func openURL(ctx context.Context, url string) (io.ReadCloser, error) {
	resp, err := modelfiles.Get(ctx, modelfiles.NewClient(), url, "clawedge/"+version, modelfiles.DefaultIdleTimeout)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		return nil, &modelfiles.HTTPError{URL: url, StatusCode: resp.StatusCode, Status: resp.Status}
	}
	return resp.Body, nil
}

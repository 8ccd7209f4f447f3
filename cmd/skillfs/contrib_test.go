package main

import (
	"encoding/xml"
	"errors"
	"io"
	"os"
	"slices"
	"testing"
)

// The launchd example runs a command line this skillfs accepts: the mount
// command with one mountpoint, in the foreground (launchd keeps it there).
func TestLaunchdExampleIsAMountCommand(t *testing.T) {
	f, err := os.Open("../../contrib/launchd/io.skillfs.mount.plist")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// A plist dict is <key> elements each followed by its value; only the
	// strings of the ProgramArguments array matter here.
	var args []string
	var key, text string
	inArgs := false
	d := xml.NewDecoder(f)
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the plist is not well-formed XML: %v", err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			text = ""
			if tk.Name.Local == "array" && key == "ProgramArguments" {
				inArgs = true
			}
		case xml.CharData:
			text += string(tk)
		case xml.EndElement:
			switch {
			case tk.Name.Local == "key":
				key = text
			case tk.Name.Local == "array":
				inArgs = false
			case tk.Name.Local == "string" && inArgs:
				args = append(args, text)
			}
		}
	}
	if len(args) < 3 || args[1] != "mount" {
		t.Fatalf("ProgramArguments: %q, want skillfs mount … MOUNTPOINT", args)
	}
	if slices.Contains(args, "--daemon") {
		t.Errorf("ProgramArguments %q: launchd needs the mount in the foreground", args)
	}
	cmd := newMountCommand()
	if err := cmd.ParseFlags(args[2:]); err != nil {
		t.Fatalf("skillfs mount %q: %v", args[2:], err)
	}
	if err := cmd.Args(cmd, cmd.Flags().Args()); err != nil {
		t.Errorf("skillfs mount %q: %v", args[2:], err)
	}
}

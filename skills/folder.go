package skills

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// MaxFolderSize bounds what a Folder holds in memory, all skills
// together.
const MaxFolderSize = 64 << 20

// Folder is a tree of skills read from a file system: every directory
// holding a SKILL.md is a skill, published as skill://<its path>/SKILL.md.
// A nested skill's files are also files of the skills that enclose it,
// as the extension asks. The files are held in memory, so the digests
// published are those of the bytes served.
type Folder struct {
	entries []Entry
	byURI   map[string]int
	files   map[string]File
	dirs    map[string][]string // directory URI → its children's URIs, sorted
}

// File is one file a Folder serves.
type File struct {
	URI      string
	MIMEType string
	Data     []byte
}

// Load reads the skills under fsys's root. A skill that breaks the
// format (no front matter, a name that differs from its folder's, over
// the limits, …) is left out and reported in skipped, one error each;
// err is for a tree that cannot be read at all.
func Load(fsys fs.FS) (f *Folder, skipped []error, err error) {
	f = &Folder{byURI: map[string]int{}, files: map[string]File{}, dirs: map[string][]string{}}
	var paths []string // every regular file, slash-separated, sorted
	var skillDirs []string
	var total int64
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != "." {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if total += info.Size(); total > MaxFolderSize {
			return fmt.Errorf("the skills folder holds over %d MiB; serve a smaller one", MaxFolderSize>>20)
		}
		paths = append(paths, p)
		if d.Name() == FileName && p != FileName {
			skillDirs = append(skillDirs, path.Dir(p))
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if slices.Contains(paths, FileName) {
		skipped = append(skipped, errors.New("SKILL.md at the folder's root is not a skill: put each skill in a folder named as the skill"))
	}
	data := map[string][]byte{}
	read := func(p string) ([]byte, error) {
		if b, ok := data[p]; ok {
			return b, nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err == nil {
			data[p] = b
		}
		return b, err
	}
	for _, dir := range skillDirs {
		e, err := f.entry(dir, paths, read)
		if err != nil {
			skipped = append(skipped, fmt.Errorf("skill %s: %w", dir, err))
			continue
		}
		f.byURI[e.URI] = len(f.entries)
		f.entries = append(f.entries, e)
	}
	// Serve the files of the skills kept, and their directories.
	for _, e := range f.entries {
		for _, r := range e.Resources.Files {
			if _, ok := f.files[r.URI]; ok {
				continue
			}
			p := strings.TrimPrefix(r.URI, Scheme+"://")
			mt := mimeType(p)
			f.files[r.URI] = File{URI: r.URI, MIMEType: mt, Data: data[p]}
			for child := r.URI; ; {
				parent := child[:strings.LastIndex(child, "/")]
				if parent == Scheme+":/" {
					break
				}
				if !slices.Contains(f.dirs[parent], child) {
					f.dirs[parent] = append(f.dirs[parent], child)
				}
				child = parent
			}
		}
	}
	for _, c := range f.dirs {
		slices.Sort(c)
	}
	return f, skipped, nil
}

// entry builds the entry of the skill in dir.
func (f *Folder) entry(dir string, paths []string, read func(string) ([]byte, error)) (Entry, error) {
	md, err := read(dir + "/" + FileName)
	if err != nil {
		return Entry{}, err
	}
	fm, _, err := Parse(md)
	if err != nil {
		return Entry{}, err
	}
	e := Entry{URI: Scheme + "://" + dir + "/" + FileName, Frontmatter: fm, Resources: &Resources{}}
	if name := e.Name(); name != path.Base(dir) {
		return Entry{}, fmt.Errorf("its front matter names it %q; the folder must have the skill's name", name)
	}
	for _, p := range paths {
		if !strings.HasPrefix(p, dir+"/") {
			continue
		}
		b, err := read(p)
		if err != nil {
			return Entry{}, err
		}
		e.Resources.Files = append(e.Resources.Files, Resource{URI: Scheme + "://" + p, Digest: Digest(b), Size: int64(len(b))})
	}
	if err := e.Check(); err != nil {
		return Entry{}, err
	}
	return e, nil
}

// Entries are the folder's skills, sorted by URI.
func (f *Folder) Entries() []Entry { return f.entries }

// Entry is the skill whose SKILL.md is at uri.
func (f *Folder) Entry(uri string) (Entry, bool) {
	i, ok := f.byURI[uri]
	if !ok {
		return Entry{}, false
	}
	return f.entries[i], true
}

// File is the file at uri.
func (f *Folder) File(uri string) (File, bool) {
	file, ok := f.files[uri]
	return file, ok
}

// Children are the direct children of the directory at uri (a skill's
// root or a folder inside one): files and, with DirectoryMIMEType,
// directories. ok is false when uri is not a directory the folder serves.
func (f *Folder) Children(uri string) (children []File, ok bool) {
	c, ok := f.dirs[strings.TrimSuffix(uri, "/")]
	if !ok {
		return nil, false
	}
	for _, u := range c {
		if file, isFile := f.files[u]; isFile {
			children = append(children, File{URI: u, MIMEType: file.MIMEType})
		} else {
			children = append(children, File{URI: u, MIMEType: DirectoryMIMEType})
		}
	}
	return children, true
}

// mimeType is the media type served for a skill file, by its extension.
func mimeType(p string) string {
	switch strings.ToLower(path.Ext(p)) {
	case ".md", ".markdown":
		return MIMEType
	case ".json":
		return "application/json"
	case ".yaml", ".yml":
		return "application/yaml"
	case ".py":
		return "text/x-python"
	case ".sh":
		return "text/x-shellscript"
	case ".html":
		return "text/html"
	case ".csv":
		return "text/csv"
	case ".txt", "":
		return "text/plain"
	}
	return "application/octet-stream"
}

//! Where the label folders are when a user named a folder one level off: one level too high
//! (`train unzipped/` where `unzipped/reviews/{neg,pos}`, as unpacking a zip of the corpus
//! folder leaves it; `train aclImdb/` where the splits `train/` and `test/` hold the labels) or
//! one level too deep (`train reviews/pos`, one label's folder). Read only to word a refusal:
//! nothing here decides what is read.

use std::path::{Path, PathBuf};

use crate::text::left_out::is_left_out;
use crate::text::mailbox::Layout;

/// How far below a lone label folder the label folders are looked for: a zip's folder, a
/// dataset's `data/`, a split's `train/`.
const MAX_DEPTH: usize = 4;

/// The sub-folders of `dir` and whether it holds files itself, leaving out what systems leave
/// in folders; `None` when it cannot be read.
fn entries(dir: &Path) -> Option<(Vec<(String, PathBuf)>, bool)> {
    let mut folders = Vec::new();
    let mut files = false;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        if is_left_out(&entry.file_name()) {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            folders.push((entry.file_name().to_string_lossy().into_owned(), path));
        } else if path.is_file() {
            files = true;
        }
    }
    folders.sort();
    Some((folders, files))
}

/// The first folder at or below `dir`, following lone sub-folders that hold no files, that
/// holds two sub-folders or more, with their names: where the label folders most likely are
/// when `dir` was read as the only label.
pub fn label_folders_below(dir: &Path) -> Option<(PathBuf, Vec<String>)> {
    let mut dir = dir.to_path_buf();
    for _ in 0..MAX_DEPTH {
        let (folders, files) = entries(&dir)?;
        match folders.len() {
            0 => return None,
            1 if files => return None,
            1 => dir = folders.into_iter().next().map(|(_, p)| p)?,
            _ => return Some((dir, folders.into_iter().map(|(n, _)| n).collect())),
        }
    }
    None
}

/// For a corpus read as one label folder, `label` under `root`: a hint naming the folder that
/// holds the label folders, or the mail store `label` is (empty when there is neither).
pub fn one_level_too_high(root: &Path, label: &str) -> String {
    // A mail store one level down (Google Takeout's `Takeout/Mail`, a Maildir in a folder).
    let below = root.join(label);
    let layout = crate::text::mailbox::detect(&below);
    if matches!(layout, Layout::Maildir | Layout::Mbox | Layout::Mh) {
        return format!(
            "; {label:?} is a mail store ({layout}): train on {}",
            below.display()
        );
    }
    match label_folders_below(&below) {
        // The splits of a corpus (`aclImdb/{train,test}`): the training split is the corpus.
        Some((dir, names)) if names.iter().all(|n| is_split(n)) => {
            let train = training_split(&names);
            format!(
                "; {label:?} holds the splits of a corpus ({}): train on {}",
                shown(&names),
                dir.join(train.unwrap_or(&names[0])).display()
            )
        }
        Some((dir, names)) => format!(
            "; {label:?} holds {} folders ({}): if those are the labels, train on {}",
            names.len(),
            shown(&names),
            dir.display()
        ),
        None => String::new(),
    }
}

/// For a folder of files without label folders: when its parent holds it and other folders of
/// files, a hint that it looks like one label's folder (empty otherwise).
pub fn one_level_too_deep(root: &Path) -> String {
    let parent = match root.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => Path::new(".").to_path_buf(),
    };
    let Some((folders, _)) = entries(&parent) else {
        return String::new();
    };
    let with_files: Vec<String> = folders
        .into_iter()
        .filter(|(_, p)| entries(p).is_some_and(|(_, files)| files))
        .map(|(n, _)| n)
        .collect();
    let name = root.file_name().map(|n| n.to_string_lossy().into_owned());
    if with_files.len() < 2 || !name.is_some_and(|n| with_files.contains(&n)) {
        return String::new();
    }
    format!(
        "; it holds files but no label folder, and its parent holds {} folders of files ({}): if it is one label's folder, give the parent, {}",
        with_files.len(),
        shown(&with_files),
        parent.display()
    )
}

/// Folder names that datasets give their splits (`aclImdb/{train,test}/{pos,neg}`).
const SPLIT_NAMES: &[&str] = &[
    "train",
    "training",
    "test",
    "testing",
    "dev",
    "devel",
    "development",
    "val",
    "valid",
    "validation",
    "eval",
    "evaluation",
    "holdout",
];

/// The split to train on among split names: the one named `train…`.
fn training_split(names: &[String]) -> Option<&String> {
    names
        .iter()
        .find(|n| n.to_ascii_lowercase().starts_with("train"))
}

fn is_split(name: &str) -> bool {
    SPLIT_NAMES.iter().any(|s| s.eq_ignore_ascii_case(name))
}

/// For a corpus whose label folders under `root` are all named like a dataset's splits, one of
/// them holding two label-like sub-folders or more: the refusal, naming the split to train on.
/// Read as labels, such splits make a model that tells the training documents from the test
/// documents (`cwtext train aclImdb`: labels "test" and "train", their `pos` and `neg` taken
/// as groups).
pub fn splits_as_labels(root: &Path, labels: &[String]) -> Option<String> {
    if labels.len() < 2 || !labels.iter().all(|l| is_split(l)) {
        return None;
    }
    let inside = labels.iter().find_map(|l| {
        let (folders, _) = entries(&root.join(l))?;
        (folders.len() >= 2).then_some((l, folders))
    })?;
    let (split, folders) = inside;
    let names: Vec<String> = folders.into_iter().map(|(n, _)| n).collect();
    let train = training_split(labels).unwrap_or(split);
    Some(format!(
        "its folders {} are the splits of a corpus, not labels: {split:?} holds the label folders ({}); give one split, e.g. train on {} (and evaluate on another), or rename the folders if they really are labels",
        labels.iter().map(|l| format!("{l:?}")).collect::<Vec<_>>().join(", "),
        shown(&names),
        root.join(train).display()
    ))
}

/// Up to five names, then how many more.
fn shown(names: &[String]) -> String {
    let mut s = names.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > 5 {
        s.push_str(&format!(", and {} more", names.len() - 5));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "a document\n").unwrap();
    }

    #[test]
    fn label_folders_are_found_below_lone_folders_without_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        touch(&root.join("zip/data/reviews/neg/1.txt"));
        touch(&root.join("zip/data/reviews/pos/1.txt"));
        touch(&root.join("zip/data/reviews/.DS_Store"));
        std::fs::create_dir_all(root.join("zip/__MACOSX")).unwrap();
        let (found, names) = label_folders_below(&root.join("zip")).unwrap();
        assert_eq!(found, root.join("zip/data/reviews"));
        assert_eq!(names, ["neg", "pos"]);
        // Splits below the lone folder: the training split is named.
        touch(&root.join("up/aclImdb/train/pos/1.txt"));
        touch(&root.join("up/aclImdb/train/neg/1.txt"));
        touch(&root.join("up/aclImdb/test/pos/1.txt"));
        assert_eq!(
            one_level_too_high(&root.join("up"), "aclImdb"),
            format!(
                "; \"aclImdb\" holds the splits of a corpus (test, train): train on {}",
                root.join("up/aclImdb/train").display()
            )
        );
        // A label folder whose only sub-folder sits beside its files is a label with groups.
        touch(&root.join("one/label/1.txt"));
        touch(&root.join("one/label/thread/2.txt"));
        assert_eq!(label_folders_below(&root.join("one/label")), None);
    }

    #[test]
    fn splits_named_as_labels_are_told_apart_from_labels() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for split in ["train", "test"] {
            touch(&root.join(split).join("neg/1.txt"));
            touch(&root.join(split).join("pos/1.txt"));
        }
        touch(&root.join("train/unsup/1.txt"));
        let labels = ["test".to_string(), "train".to_string()];
        let refusal = splits_as_labels(root, &labels).unwrap();
        assert!(
            refusal.starts_with("its folders \"test\", \"train\" are the splits of a corpus, not labels: \"test\" holds the label folders (neg, pos); give one split, e.g. train on "),
            "{refusal}"
        );
        assert!(refusal.contains(&root.join("train").display().to_string()));
        // Labels that are not all split names, or splits without sub-folders, are labels.
        let mixed = ["test".to_string(), "spam".to_string()];
        assert_eq!(splits_as_labels(root, &mixed), None);
        let flat = tempfile::tempdir().unwrap();
        touch(&flat.path().join("train/1.txt"));
        touch(&flat.path().join("test/1.txt"));
        assert_eq!(splits_as_labels(flat.path(), &labels), None);
    }

    #[test]
    fn a_label_folder_among_siblings_is_named_with_its_parent() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        touch(&root.join("reviews/neg/1.txt"));
        touch(&root.join("reviews/pos/1.txt"));
        std::fs::create_dir_all(root.join("reviews/empty")).unwrap();
        let hint = one_level_too_deep(&root.join("reviews/pos"));
        assert!(hint.contains("2 folders of files (neg, pos)"), "{hint}");
        assert!(hint.ends_with(&root.join("reviews").display().to_string()));
        // Alone in its parent it is no label among others.
        touch(&root.join("alone/docs/1.txt"));
        assert_eq!(one_level_too_deep(&root.join("alone/docs")), "");
    }
}

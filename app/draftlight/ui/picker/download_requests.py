"""What the picker's Download buttons start: one file of a repository, or a target and its
draft as a pair (a hub draft's file chosen once its list is in, Q8_0 where there is one), each on
the shared DownloadQueue and shown in the downloads panel; a file installed already is not
fetched again. DownloadRequests holds it; PickerDialog extends it."""

from __future__ import annotations

from draftlight.settings import added_model_folders
from draftlight.store.curated_copies import copy_of
from draftlight.store.downloads import DownloadJob
from draftlight.store.draft_options import DraftOption
from draftlight.store.errors import StoreError
from draftlight.store.file_choice import pick_draft_file
from draftlight.store.hub import HubFile
from draftlight.store.found_models import every_model
from draftlight.store.installed import list_installed
from draftlight.store.pair_download import PairDownload


class DownloadRequests:
    """The downloads half of PickerDialog (which has the hub, catalog, queue, downloads panel,
    files panel, status line and the hub's requests)."""

    def download_file(self, file: HubFile) -> DownloadJob | None:
        if self._client() is None:
            return None
        curated = self.catalog.find(file.repo_id, file.path) if self.catalog else None
        return self.start_download(file.repo_id, file.path, sha256=file.sha256,
                                   name=curated.name if curated else None)

    def start_download(self, repo_id: str, filename: str, *, sha256: str | None = None,
                       name: str | None = None) -> DownloadJob | None:
        job = self._job(repo_id, filename, sha256=sha256, name=name)
        if job is not None:
            job = self.queue.submit(job)
            self.downloads.add_job(job)
        return job

    def _job(self, repo_id: str, filename: str, **kwargs) -> DownloadJob | None:
        try:
            return DownloadJob(self.hub, repo_id, filename, **kwargs)
        except StoreError as exc:
            self.report(exc)
            return None

    def download_pair(self, option: DraftOption) -> None:
        """The chosen target file and `option`; a hub draft's file is chosen once its list is
        in (Q8_0 where there is one)."""
        target = self.files_panel.selected_file()
        hub = self._client()
        if target is None or hub is None:
            self.status.setText("Choose the target's file first")
            return
        if option.installed or option.file:
            self._start_pair(target, option, option.file)
            return
        self.status.setText(f"Choosing a file from {option.repo}…")
        self._requests.run(
            "draft-files", lambda: pick_draft_file(hub.list_files(option.repo)),
            lambda file: self._start_pair(target, option, file.path if file else None,
                                          file.size if file else None, file.sha256 if file
                                          else None),
            lambda exc: self.report(exc, lambda: self.download_pair(option)))

    def _start_pair(self, target: HubFile, option: DraftOption, draft_file: str | None,
                    draft_size: int | None = None, draft_sha: str | None = None) -> None:
        installed = {(m.repo, m.file) for m in list_installed() if m.exists}
        models = every_model(added_model_folders())
        wanted = [(target.repo_id, target.path, target.sha256, None, target.size)]
        if not option.installed:
            if draft_file is None:
                self.status.setText(f"{option.repo} has no single-file GGUF model")
                return
            wanted.append((option.repo, draft_file, option.sha256 or draft_sha,
                           option.name if option.file else None, option.size or draft_size))
        jobs, hints = [], []
        for repo_id, filename, sha, name, size in wanted:
            curated = self.catalog.find(repo_id, filename) if self.catalog else None
            if (repo_id, filename) in installed or curated and copy_of(curated, models):
                continue  # here already: Draftlight's, or another app's copy of a curated one
            name = name or (curated.name if curated else None)  # as models.toml names it
            job = self._job(repo_id, filename, sha256=sha, name=name)
            if job is None:
                return
            jobs.append(self.queue.submit(job))
            hints.append(size)
        if not jobs:
            self.status.setText("Both models are on this computer already: use them from "
                                "Installed")
            return
        draft_name = (draft_file or option.name).rsplit("/", 1)[-1].removesuffix(".gguf")
        label = f"{target.path.removesuffix('.gguf')}  +  {draft_name}"
        self.downloads.add_pair(PairDownload(jobs, hints, label=label))
        self.status.setText(f"Downloading {label}")

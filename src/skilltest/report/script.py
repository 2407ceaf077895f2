"""The HTML report's one script, and the Content-Security-Policy that lets it alone run.

The page reads in full without JavaScript; the script only makes a large page easier to use:

- **filter and search**: each layer's form (hidden until the script shows it) keeps the
  scenarios of the verdicts ticked whose id holds the text searched for (case-insensitive),
  in the verdict table and below it, and says how many it shows;
- **the state in the link**: what is ticked and searched is kept in the page's fragment
  (``#pressure.verdict=steers&pressure.id=checkout``), so a link opens the page filtered; a
  link to a scenario (``#pressure-12``) opens it, showing it again when a filter hid it;
- **details made when opened**: a heavy body is written inside ``<noscript class="later">``.
  A browser without JavaScript builds it as any other markup; a browser running scripts keeps
  it as one inert text node (what HTML parsers make of ``<noscript>`` then), which the script
  turns into elements when its ``<details>`` opens. A large layer's scenarios (those of a
  layer marked ``data-fold``) start folded. Find-in-page sees only what was opened.

Nothing is fetched and no handler is written in the markup: the policy allows this script by
its sha256 (:data:`CSP`), so a script changed without its hash, or any other script, does not
run. A page whose script cannot run while the browser runs scripts (a server's own policy, an
extension) says so in its ``script-note``, which the script hides.
"""

from __future__ import annotations

import base64
import hashlib

SCRIPT = """
"use strict";
(() => {
  const root = document.documentElement;
  root.classList.add("scripted");
  const unfold = (details) => {
    for (const later of details.querySelectorAll(":scope > noscript.later")) {
      const template = document.createElement("template");
      template.innerHTML = later.textContent;
      later.replaceWith(template.content);
    }
  };
  const open = (details) => {
    details.open = true;
    unfold(details);
  };
  let started = false;
  // Built as its summary is clicked (or pressed), before it opens; on a toggle when something
  // else opens it (find-in-page). A <details> parsed open reports a toggle too: the layers
  // are folded first (start).
  document.addEventListener("click", (event) => {
    const summary = event.target instanceof Element ? event.target.closest("summary") : null;
    const details = summary ? summary.parentElement : null;
    if (details instanceof HTMLDetailsElement && details.firstElementChild === summary) {
      unfold(details);
    }
  }, true);
  document.addEventListener("toggle", (event) => {
    const details = event.target;
    if (started && details instanceof HTMLDetailsElement && details.open) unfold(details);
  }, true);
  const finders = [];
  const apply = (finder) => {
    const wanted = new Set(finder.boxes.filter((box) => box.checked).map((box) => box.value));
    const needle = finder.search.value.trim().toLowerCase();
    let shown = 0;
    for (const item of finder.items) {
      const visible = wanted.has(item.verdict) && item.id.includes(needle);
      item.row.hidden = !visible;
      if (item.section) item.section.hidden = !visible;
      shown += visible ? 1 : 0;
    }
    const total = finder.items.length;
    finder.status.textContent = shown === total
      ? `showing all ${total}`
      : `showing ${shown} of ${total}`;
  };
  const save = () => {
    const state = new URLSearchParams();
    for (const finder of finders) {
      if (finder.boxes.some((box) => !box.checked)) {
        const ticked = finder.boxes.filter((box) => box.checked);
        if (!ticked.length) state.append(`${finder.name}.verdict`, "");
        for (const box of ticked) state.append(`${finder.name}.verdict`, box.value);
      }
      const needle = finder.search.value.trim();
      if (needle) state.append(`${finder.name}.id`, needle);
    }
    const fragment = state.toString();
    const target = fragment ? `#${fragment}` : location.pathname + location.search;
    try {
      history.replaceState(null, "", target);
    } catch {
      location.replace(`#${fragment}`);
    }
  };
  const clear = (finder) => {
    for (const box of finder.boxes) box.checked = true;
    finder.search.value = "";
    apply(finder);
  };
  const reveal = (id) => {
    const target = document.getElementById(id);
    if (!target) return;
    if (target.closest("[hidden]")) {
      for (const finder of finders) if (finder.layer.contains(target)) clear(finder);
      save();
    }
    for (let at = target; at; at = at.parentElement) {
      if (at instanceof HTMLDetailsElement) open(at);
    }
    const about = target.querySelector(":scope > details.about");
    if (about) open(about);
    target.scrollIntoView();
  };
  const restore = () => {
    const fragment = location.hash.slice(1);
    if (!fragment.includes("=")) {
      try {
        if (fragment) reveal(decodeURIComponent(fragment));
      } catch {
        // a fragment that is no element's id: nothing to open
      }
      return;
    }
    const state = new URLSearchParams(fragment);
    for (const finder of finders) {
      const key = `${finder.name}.verdict`;
      const ticked = state.getAll(key);
      for (const box of finder.boxes) box.checked = !state.has(key) || ticked.includes(box.value);
      finder.search.value = state.get(`${finder.name}.id`) || "";
      apply(finder);
    }
  };
  const start = () => {
    started = true;
    for (const later of document.querySelectorAll("[data-fold] details[open] > noscript.later")) {
      later.parentElement.open = false;
    }
    for (const later of document.querySelectorAll("details[open] > noscript.later")) {
      unfold(later.parentElement);
    }
    for (const layer of document.querySelectorAll("section.layer")) {
      const form = layer.querySelector("form.finder");
      if (!form) continue;
      const items = [];
      for (const row of layer.querySelectorAll("table.verdicts tr[data-verdict]")) {
        const link = row.querySelector("a[href^='#']");
        items.push({
          row,
          verdict: row.dataset.verdict,
          id: (link ? link.textContent : "").toLowerCase(),
          section: link ? document.getElementById(link.getAttribute("href").slice(1)) : null,
        });
      }
      const finder = {
        layer,
        items,
        name: layer.id.replace(/^layer-/, ""),
        boxes: [...form.querySelectorAll("input[name=verdict]")],
        search: form.querySelector("input[name=id]"),
        status: form.querySelector(".shown"),
      };
      finders.push(finder);
      apply(finder);
      const changed = () => {
        apply(finder);
        save();
      };
      form.addEventListener("input", changed);
      form.addEventListener("change", changed);
      form.addEventListener("submit", (event) => event.preventDefault());
      form.querySelector("button.all").addEventListener("click", () => {
        clear(finder);
        save();
      });
      form.hidden = false;
    }
    restore();
    addEventListener("hashchange", restore);
  };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
"""
"""The script, written into the page's ``<head>`` exactly as it is here."""


def script_source(script: str = SCRIPT) -> str:
    """The CSP source that allows ``script`` inline and nothing else: ``'sha256-…'``, the
    base64 of the SHA-256 of its UTF-8 text."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    f"script-src {script_source()}; base-uri 'none'; form-action 'none'"
)
"""The page's policy: its one script by hash (no other script, no handler written in the
markup), inline styles, ``data:`` images; nothing fetched, no form sent anywhere."""

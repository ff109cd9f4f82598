// The operator view: every <time datetime="…"> the server wrote in UTC is
// shown in the browser's own time zone, to the minute; the exact UTC
// instant stays in the tooltip.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const fmt = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
  for (const el of document.querySelectorAll("time[datetime]")) {
    const d = new Date(el.getAttribute("datetime"));
    if (!Number.isNaN(d.getTime())) el.textContent = fmt.format(d);
  }
});

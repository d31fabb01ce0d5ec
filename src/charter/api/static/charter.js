// Opens a run's graph at the node the run is at (or failed at): the graph box scrolls so
// that node is in its middle. Without script the page works; a link jumps to the node.
document.querySelectorAll(".graph").forEach(function (box) {
  var node = box.querySelector("#graph-focus");
  if (!node) return;
  var outer = box.getBoundingClientRect(), inner = node.getBoundingClientRect();
  box.scrollLeft += inner.left - outer.left - (outer.width - inner.width) / 2;
  box.scrollTop += inner.top - outer.top - (outer.height - inner.height) / 2;
});

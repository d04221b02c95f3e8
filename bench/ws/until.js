// Artillery processor of bench/ws.sh: `whileTrue: running` keeps each virtual user's loop going
// until DURATION seconds (environment, default 10) after the first virtual user asked, so that
// Artillery, like loadgate, runs the closed model for a fixed time.
let end;

function running(context, next) {
  if (end === undefined) end = Date.now() + 1000 * Number(process.env.DURATION || 10);
  return next(Date.now() < end);
}

module.exports = { running };

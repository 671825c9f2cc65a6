package procid

// Slack is how far apart two creation times of one process may read
// (the tests build identities at and past it).
const Slack = slack

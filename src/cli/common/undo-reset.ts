/**
 * kafka-consumer-groups.sh --undo-reset (a Fjord extension, issue 25): the undo command a reset
 * prints so that it can be taken back. The undo's plan (before the last reset, or at a time) is
 * src/client/offset-history/undo-plan.ts, which the console uses too.
 */

/** A word as a POSIX shell reads it back: as is when plain, else single-quoted. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/** The command that undoes a reset of `group` just executed, with the connection options given. */
export function undoCommand(tool: string, group: string, bootstrapServer: string, commandConfig: string | undefined): string {
  const words = [
    tool,
    '--bootstrap-server',
    bootstrapServer,
    ...(commandConfig ? ['--command-config', commandConfig] : []),
    '--undo-reset',
    '--group',
    group,
    '--execute',
  ];
  return words.map(shellWord).join(' ');
}

/**
 * Small helpers for VS Code disposables: a bag that disposes everything it holds once, in
 * reverse order. Every registration the extension makes ends up in one of these or directly in
 * `context.subscriptions`, so deactivation leaves nothing behind.
 */
import type * as vscode from 'vscode';

export class DisposableBag implements vscode.Disposable {
  private items: { dispose(): unknown }[] = [];
  private disposed = false;

  add<T extends { dispose(): unknown }>(item: T): T {
    if (this.disposed) item.dispose();
    else this.items.push(item);
    return item;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    const items = this.items.reverse();
    this.items = [];
    for (const item of items) {
      try {
        item.dispose();
      } catch {
        // One failing disposal must not keep the others from running.
      }
    }
  }
}

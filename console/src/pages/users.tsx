import type { AreaProps } from "../areas";

export default function Area(_props: AreaProps) {
  return <h1>users</h1>;
}
